"""Data-scarce splits: k per class, disjoint, covering, seeded."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.train.few_shot import digit_images, per_class_split


def test_k_per_class_and_the_rest_for_testing():
    x, y = digit_images()
    assert x.shape == (1797, 1, 8, 8) and x.dtype == np.float32 and 0 <= x.min() and x.max() == 1.0
    train, test = per_class_split(y, 10, seed=3)
    assert np.bincount(y[train]).tolist() == [10] * 10
    assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == len(y)
    np.testing.assert_array_equal(per_class_split(y, 10, seed=3)[0], train)  # seeded
    assert not np.array_equal(per_class_split(y, 10, seed=4)[0], train)


def test_refuses_a_k_that_leaves_nothing_to_test():
    with pytest.raises(ValueError, match="class 1 has 2 samples"):
        per_class_split(np.array([0, 0, 0, 1, 1]), 2, 0)
    with pytest.raises(ValueError, match="k: must be >= 1"):
        per_class_split(np.array([0, 1]), 0, 0)
