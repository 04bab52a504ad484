"""neural_qaoa2's evaluation: first places with ties, the summary, claims C1-C3 decided or not."""
from __future__ import annotations

import numpy as np
import pytest

from flows.neural_qaoa2.evaluation import ABLATION, COMPARED, claims, first_places, summarize, with_random_angles


def per_graph_rows() -> list[dict]:
    """Two in-distribution graphs and one out-of-distribution graph; Neural ties kl on g1."""
    rho = {"g0": {"random": 0.80, "modularity": 0.82, "boundary": 0.81, "kl": 0.85, "neural": 0.90, ABLATION: 0.86},
           "g1": {"random": 0.70, "modularity": 0.71, "boundary": 0.72, "kl": 0.88, "neural": 0.88, ABLATION: 0.75},
           "o0": {"random": 0.60, "modularity": 0.65, "boundary": 0.62, "kl": 0.70, "neural": 0.68, ABLATION: 0.61}}
    return [{"split": "test_ood" if graph.startswith("o") else "test_id", "graph": graph, "policy": policy, "rho": value,
             "time_s": 1.0} for graph, by_policy in rho.items() for policy, value in by_policy.items()]


def heldout_rows() -> list[dict]:
    rho = np.linspace(0.5, 0.9, 6)
    return [{"rho": r, "rho_hat": r + 0.01 * (-1) ** k, "modularity": 0.3} for k, r in enumerate(rho)]


def test_first_places_count_ties_for_every_tied_policy():
    counts = first_places(per_graph_rows())
    assert set(counts) == set(COMPARED)
    assert counts == {"random": 0, "modularity": 0, "boundary": 0, "kl": 2, "neural": 2}


def test_summary_and_claims_decided_and_undecided():
    per_graph, heldout = per_graph_rows(), heldout_rows()
    summary = summarize(per_graph, heldout)
    assert summary["test_id.neural.mean_rho"] == pytest.approx(0.89)
    assert np.isnan(summary["modularity.pearson"]) and summary["critic.pearson"] > 0.9
    outcome = {"per_graph": per_graph, "summary": summary}
    c1, c2, c3 = claims(outcome, min_gain=0.1, min_win_fraction=1.0, min_correlation=0.5, decide=True)
    assert c1.ours == pytest.approx((0.10 + 0.18) / 2) and c1.passed is True
    assert c1.details["ablation_learned_vs_random_angles"] == pytest.approx(0.89 - 0.805)
    assert (c2.ours, c2.threshold, c2.passed) == (2.0, 2.0, False)  # a tie is not strictly more
    assert c3.passed is True
    assert all(c.passed is None for c in claims(outcome, min_gain=0.1, min_win_fraction=1.0, min_correlation=0.5,
                                                decide=False))


def test_random_angles_keep_the_partition():
    parts = [np.array([0, 1]), np.array([2])]
    ablated = with_random_angles(lambda graph, n_max, rng, level: (parts, [(0.0, 0.0), (0.0, 0.0)]))
    got, angles = ablated(None, 2, np.random.default_rng(0), 0)
    assert got is parts and len(angles) == 2
    assert all(0 <= a < 2 * np.pi for pair in angles for a in pair)
