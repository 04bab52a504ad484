"""Dirichlet label split, FedAvg's weighted average, the small k-means (spec §10.4-5)."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.federated.averaging import weighted_average
from tasks.federated.kmeans import kmeans
from tasks.federated.partition import dirichlet_label_split, label_entropy


def test_every_sample_assigned_once_and_skew_grows_as_alpha_shrinks():
    labels = np.random.default_rng(0).integers(0, 10, 2000)
    entropies = {}
    for alpha in (0.1, 10.0):
        parts = dirichlet_label_split(labels, 10, alpha, np.random.default_rng(1))
        merged = np.concatenate(parts)
        assert len(merged) == len(labels) and np.array_equal(np.sort(merged), np.arange(len(labels)))
        entropies[alpha] = np.mean([label_entropy(labels[p], 10) for p in parts])
    assert entropies[0.1] < entropies[10.0]


def test_weighted_average_rules():
    a = {"w": np.ones((2, 2), np.float32), "b": np.zeros(2, np.float32)}
    same = weighted_average([a, a, a], [3, 1, 5])
    assert all(np.array_equal(same[k], a[k]) and same[k].dtype == a[k].dtype for k in a)
    b = {"w": np.full((2, 2), 4.0, np.float32), "b": np.ones(2, np.float32)}
    mixed = weighted_average([a, b], [1, 3])  # weights proportional to n_k
    assert np.allclose(mixed["w"], 0.25 * 1 + 0.75 * 4) and np.allclose(mixed["b"], 0.75)
    nan = {"w": np.full((2, 2), np.nan, np.float32), "b": np.full(2, np.nan, np.float32)}
    assert np.array_equal(weighted_average([a, nan], [2, 0])["w"], a["w"])  # an empty client is skipped
    with pytest.raises(ValueError):
        weighted_average([a], [0])


def test_kmeans_matches_sklearn_on_separated_clusters():
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    points = np.concatenate([c + rng.normal(scale=0.5, size=(n, 2)) for c, n in zip(centres, (20, 30, 50))])
    ours, masses = kmeans(points, 3, np.random.default_rng(0))
    ref = KMeans(3, n_init=5, random_state=0).fit(points)
    order, ref_order = np.lexsort(ours.T), np.lexsort(ref.cluster_centers_.T)
    assert np.allclose(ours[order], ref.cluster_centers_[ref_order], atol=1e-6)
    ref_masses = np.bincount(ref.labels_, minlength=3) / len(points)
    assert np.allclose(masses[order], ref_masses[ref_order]) and masses.sum() == pytest.approx(1.0)


def test_kmeans_with_duplicates_and_few_points():
    points = np.array([[1.0, 1.0]] * 5 + [[2.0, 2.0]])
    centres, masses = kmeans(points, 3, np.random.default_rng(0))  # two distinct points: two centres, no warning
    assert len(centres) == 2 and np.allclose(sorted(masses), [1 / 6, 5 / 6])
    one, mass = kmeans(points[:1], 3, np.random.default_rng(0))
    assert one.shape == (1, 2) and mass.tolist() == [1.0]
