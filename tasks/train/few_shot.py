"""Data-scarce splits: k training samples per class, every other sample for testing, and
scikit-learn's digits as 8x8 images for the convolutional backbones that need the image shape."""
from __future__ import annotations

import numpy as np


def per_class_split(labels: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) indices: k indices drawn per class without replacement by `seed`, the rest for testing.
    Both sorted, so the split depends on the seed alone, never on the order the classes are met."""
    labels = np.asarray(labels)
    if k < 1:
        raise ValueError(f"k: must be >= 1, got {k!r}")
    rng = np.random.default_rng(seed)
    chosen = []
    for cls in np.unique(labels):
        members = np.flatnonzero(labels == cls)
        if len(members) <= k:
            raise ValueError(f"k: class {cls} has {len(members)} samples, needs more than k = {k} (one left to test)")
        chosen.append(rng.choice(members, size=k, replace=False))
    train = np.sort(np.concatenate(chosen))
    return train, np.setdiff1d(np.arange(len(labels)), train)


def digit_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled digits: images [1797, 1, 8, 8] float32 in [0, 1] (pixels / 16), labels int64."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    return (digits.images[:, None] / 16.0).astype(np.float32), digits.target.astype(np.int64)
