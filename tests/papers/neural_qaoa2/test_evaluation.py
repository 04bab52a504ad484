"""neural_qaoa2's evaluation: first places with ties, within-graph correlations, the summary, claims C1-C3
decided or not."""
from __future__ import annotations

import numpy as np
import pytest

from flows.neural_qaoa2.evaluation import (
    ABLATION,
    COMPARED,
    claims,
    first_places,
    summarize,
    with_random_angles,
    within_pearson,
    within_spearman,
)


def per_graph_rows() -> list[dict]:
    """Two in-distribution graphs and one out-of-distribution graph; Neural ties kl on g1."""
    rho = {"g0": {"random": 0.80, "modularity": 0.82, "boundary": 0.81, "kl": 0.85, "neural": 0.90, ABLATION: 0.86},
           "g1": {"random": 0.70, "modularity": 0.71, "boundary": 0.72, "kl": 0.88, "neural": 0.88, ABLATION: 0.75},
           "o0": {"random": 0.60, "modularity": 0.65, "boundary": 0.62, "kl": 0.70, "neural": 0.68, ABLATION: 0.61}}
    return [{"split": "test_ood" if graph.startswith("o") else "test_id", "graph": graph, "family": graph[0],
             "policy": policy, "rho": value, "time_s": 1.0} for graph, by_policy in rho.items() for policy, value in by_policy.items()]


def heldout_rows() -> list[dict]:
    """Two graphs, three runs each; the critic tracks rho inside each graph, intra_share only across graphs."""
    rho = {"g0": [0.80, 0.85, 0.90], "g1": [0.60, 0.62, 0.64]}
    return [{"graph": g, "rho": r, "rho_hat": r + 0.001 * k, "intra_share": {"g0": 0.7, "g1": 0.2}[g] + 0.01 * (k % 2),
             "modularity": 0.3} for g, values in rho.items() for k, r in enumerate(values)]


REFERENCES = {"g0": {"status": "proved", "optimum": 10.0, "generated": 10.0},
              "g1": {"status": "best_known", "optimum": 12.0, "generated": 11.0},
              "o0": {"status": "proved", "optimum": 5.0, "generated": 5.0}}


def test_within_graph_correlation_ignores_differences_between_graphs():
    groups = ["a"] * 3 + ["b"] * 3
    y = [0.1, 0.2, 0.3, 0.7, 0.8, 0.9]
    between_only = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]  # pooled Pearson ~0.98, no ranking inside a graph
    assert np.corrcoef(between_only, y)[0, 1] > 0.9 and np.isnan(within_pearson(between_only, y, groups))
    reversed_inside = [3.0, 2.0, 1.0, 13.0, 12.0, 11.0]  # pooled positive, every graph ranked backwards
    assert np.corrcoef(reversed_inside, y)[0, 1] > 0.8
    assert within_pearson(reversed_inside, y, groups) == pytest.approx(-1.0)
    assert within_spearman([1.0, 5.0, 9.0, 0.0, 0.1, 0.2], y, groups) == pytest.approx(1.0)  # monotone, not linear


def test_first_places_count_ties_for_every_tied_policy():
    counts = first_places(per_graph_rows())
    assert set(counts) == set(COMPARED)
    assert counts == {"random": 0, "modularity": 0, "boundary": 0, "kl": 2, "neural": 2}


def test_summary_and_claims_decided_and_undecided():
    per_graph, heldout = per_graph_rows(), heldout_rows()
    summary = summarize(per_graph, heldout, REFERENCES)
    assert summary["test_id.neural.mean_rho"] == pytest.approx(0.89)
    assert summary["family.o.kl.mean_rho"] == pytest.approx(0.70)
    assert np.isnan(summary["modularity.pearson"]) and summary["critic.pearson"] > 0.9
    assert summary["critic.within_pearson"] > 0.99 and summary["critic.within_spearman"] == pytest.approx(1.0)
    assert summary["intra_share.pearson"] > 0.9 and abs(summary["intra_share.within_pearson"]) < 0.5
    assert (summary["references.proved"], summary["references.best_known"], summary["references.improved_in_run"]) == (2, 1, 1)
    outcome = {"per_graph": per_graph, "summary": summary}
    c1, c2, c3 = claims(outcome, min_gain=0.1, min_win_fraction=1.0, min_correlation=0.5, decide=True)
    assert c1.ours == pytest.approx((0.10 + 0.18) / 2) and c1.passed is True
    assert c1.details["ablation_learned_vs_random_angles"] == pytest.approx(0.89 - 0.805)
    assert (c2.ours, c2.threshold, c2.passed) == (2.0, 2.0, False)  # a tie is not strictly more
    assert c3.passed is True and c3.details["critic.within_pearson"] == summary["critic.within_pearson"]
    assert all(c.passed is None for c in claims(outcome, min_gain=0.1, min_win_fraction=1.0, min_correlation=0.5,
                                                decide=False))


def test_random_angles_keep_the_partition():
    parts = [np.array([0, 1]), np.array([2])]
    ablated = with_random_angles(lambda graph, n_max, rng, level: (parts, [(0.0, 0.0), (0.0, 0.0)]))
    got, angles = ablated(None, 2, np.random.default_rng(0), 0)
    assert got is parts and len(angles) == 2
    assert all(0 <= a < 2 * np.pi for pair in angles for a in pair)
