"""scikit-learn's 8x8 digits as 2-D point sets: each image is the set of its inked pixels.

Element of a pixel with value v >= 4 (of 16) at (row, col): (col / 3.5 - 1, row / 3.5 - 1, v / 16), so
positions lie in [-1, 1]^2 and intensities in (0, 1]. Each set is resampled with replacement to n elements.
"""
from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

INK = 4.0  # minimum pixel value (of 16) that makes an element
LOW, HIGH = np.array([-1.0, -1.0, 0.0]), np.array([1.0, 1.0, 1.0])  # the box the elements live in


def image_to_set(image: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(image >= INK)
    return np.stack([cols / 3.5 - 1.0, rows / 3.5 - 1.0, image[rows, cols] / 16.0], axis=1)


def digit_sets(n: int, seed: int, test_fraction: float) -> dict[str, np.ndarray]:
    """X_train, y_train, X_test, y_test: [N, n, 3] float32 point sets (stratified split by `seed`)."""
    digits = load_digits()
    rng = np.random.default_rng(seed)
    sets = []
    for image in digits.images:
        elements = image_to_set(image)
        sets.append(elements[rng.integers(0, len(elements), size=n)])
    X = np.stack(sets).astype(np.float32)
    X_train, X_test, y_train, y_test = train_test_split(X, digits.target, test_size=test_fraction, random_state=seed,
                                                        stratify=digits.target)
    return {"X_train": X_train, "y_train": y_train, "X_test": X_test, "y_test": y_test}
