"""neural_qaoa2's evaluation: first places with ties, within-graph correlations, the summary, claims C1-C3
decided or not (C3 within graphs against the intra-part |w| share), references that are lower bounds said so."""
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
    spearman_table,
    within_pearson,
    within_spearman,
)
from tasks.quantum.ranking import mean_within_spearman, spearman


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
             "modularity": 0.3 + 0.01 * k} for g, values in rho.items() for k, r in enumerate(values)]


REFERENCES = {"g0": {"status": "proved", "optimum": 10.0, "generated": 10.0},
              "g1": {"status": "lower_bound", "optimum": 12.0, "generated": 11.0},
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
    assert abs(summary["modularity.pearson"]) < 0.5 and summary["critic.pearson"] > 0.9
    assert summary["critic.within_pearson"] > 0.99 and summary["critic.within_spearman"] == pytest.approx(1.0)
    assert summary["intra_share.pearson"] > 0.9 and abs(summary["intra_share.within_pearson"]) < 0.5
    assert (summary["references.proved"], summary["references.lower_bound"], summary["references.improved_in_run"]) == (2, 1, 1)
    outcome = {"per_graph": per_graph, "summary": summary, "heldout": heldout, "references": REFERENCES,
               "scorer": "intra_share"}
    c1, c2, c3 = claims(outcome, min_gain=0.05, min_win_fraction=1.0, min_correlation=0.5, seed=0, decide_claims=True)
    assert c1.ours == pytest.approx((0.10 + 0.18) / 2) and c1.verdict.word == "pass"
    assert c1.details["gain_per_graph"] == pytest.approx({"g0": 0.10, "g1": 0.18})
    assert c1.details["ablation_learned_vs_random_angles"] == pytest.approx(0.89 - 0.805)
    assert (c2.ours, c2.threshold, c2.verdict.word) == (0.0, 1.0, "inconclusive")  # a tie is not strictly more
    assert c2.details["first_places"] == {"random": 0, "modularity": 0, "boundary": 0, "kl": 2, "neural": 2}
    # C3 within graphs: the critic ranks both graphs perfectly, the share ranks g0 at 0.5 and g1 at 0.5
    assert c3.ours == pytest.approx(1.0) == summary["critic.mean_spearman"]
    assert c3.details["critic_minus_share"] == pytest.approx(1.0 - summary["intra_share.mean_spearman"])
    assert c3.details["pooled_pearson_detail"]["critic"] == summary["critic.pearson"]
    assert c3.details["per_graph_spearman"]["critic"] == pytest.approx({"g0": 1.0, "g1": 1.0})
    assert c3.verdict.interval.n == 2 and "over 2 graphs" in c3.verdict.interval.method
    assert "critic minus intra-|w| share" in c3.verdict.reason
    for claim in (c1, c2, c3):  # g1's reference is a lower bound, and every claim says so
        assert claim.details["references_lower_bound"] == ["g1"] and claim.details["references_proved"] == 2
        assert "lower bound" in claim.statement and "on 1 of 3 graphs" in claim.statement
        assert claim.details["scorer"] == "intra_share"
    smoke = claims(outcome, min_gain=0.1, min_win_fraction=1.0, min_correlation=0.5, seed=0, decide_claims=False)
    assert [c.verdict.word for c in smoke] == ["undecided"] * 3


def synthetic(gains, firsts, critic_noise, share_noise=1.0, runs=10, seed=0):
    """An outcome over len(gains) in-distribution graphs: Neural's rho is random's plus the graph's gain, the best
    policy of graph k is firsts[k], and each graph's held-out runs have rho-hat = rho + critic_noise * N(0, 1) and
    intra_share = rho + share_noise * N(0, 1); Neural is first where firsts[k] names no other policy and its gain is
    positive. Every reference proved."""
    rng = np.random.default_rng(seed)
    per_graph = []
    for k, (gain, first) in enumerate(zip(gains, firsts)):
        rho = {"random": 0.80, "modularity": 0.70, "boundary": 0.70, "kl": 0.70, ABLATION: 0.80, "neural": 0.80 + gain}
        if first != "neural":
            rho[first] = 0.99
        per_graph += [{"split": "test_id", "graph": f"g{k:02d}", "family": "g", "policy": p, "rho": value, "time_s": 1.0}
                      for p, value in rho.items()]
    heldout = []
    for k in range(len(gains)):
        rho = rng.uniform(0.6, 0.95, runs)
        heldout += [{"graph": f"g{k:02d}", "rho": r, "rho_hat": r + critic_noise * rng.normal(),
                     "modularity": rng.normal(), "intra_share": r + share_noise * rng.normal()}
                    for r in rho]
    references = {f"g{k:02d}": {"status": "proved", "optimum": 1.0, "generated": 1.0} for k in range(len(gains))}
    return {"per_graph": per_graph, "heldout": heldout, "summary": summarize(per_graph, heldout, references),
            "references": references, "scorer": "critic"}


def verdicts(outcome, **gates):
    return [c.verdict.word for c in claims(outcome, **({"min_gain": 0.005, "min_win_fraction": 0.6, "min_correlation": 0.5}
                                                       | gates), seed=0, decide_claims=True)]


def spread(centre, width, n=20):
    return list(np.linspace(centre - width, centre + width, n))


def test_clear_samples_pass():
    assert verdicts(synthetic(spread(0.05, 0.01), ["neural"] * 20, critic_noise=0.02)) == ["pass"] * 3


def test_clear_misses_fail():
    assert verdicts(synthetic(spread(0.001, 0.0005), ["kl"] * 20, critic_noise=1.0)) == ["fail"] * 3
    # Neural gains a lot on 5 graphs and loses a little on 15: the mean gain clears 0.005, the win share never 60%
    assert verdicts(synthetic([0.2] * 5 + [-0.001] * 15, ["neural"] * 20, critic_noise=0.02))[0] == "fail"
    # the critic ranks well within graphs (well above 0.5), but the intra-|w| share ranks better
    outcome = synthetic(spread(0.05, 0.01), ["neural"] * 20, critic_noise=0.05, share_noise=0.0)
    assert outcome["summary"]["critic.mean_spearman"] > 0.7 and verdicts(outcome)[2] == "fail"


def test_noisy_samples_near_the_gates_are_inconclusive():
    c1, _, c3 = claims(synthetic(spread(0.006, 0.03, n=11), ["kl"] * 11, critic_noise=0.12, runs=6), min_gain=0.005,
                       min_win_fraction=0.5, min_correlation=0.5, seed=0, decide_claims=True)
    assert c1.verdict.word == "inconclusive" and c1.verdict.interval.low < 0.005 < c1.verdict.interval.high
    assert c3.verdict.word == "inconclusive" and c3.verdict.interval.low < 0.5 < c3.verdict.interval.high
    assert "share: the 95% interval" in c3.verdict.reason and "lies in >= 0" in c3.verdict.reason  # that part holds
    c2 = claims(synthetic(spread(0.05, 0.01, n=11), ["neural", "kl"] * 5 + ["neural"], critic_noise=0.02),
                min_gain=0.005, min_win_fraction=0.6, min_correlation=0.5, seed=0, decide_claims=True)[1]
    assert c2.ours == 1.0 and c2.verdict.word == "inconclusive"  # 6 first places against 5 of 11


def test_random_angles_keep_the_partition():
    parts = [np.array([0, 1]), np.array([2])]
    ablated = with_random_angles(lambda graph, n_max, rng, level: (parts, [(0.0, 0.0), (0.0, 0.0)]))
    got, angles = ablated(None, 2, np.random.default_rng(0), 0)
    assert got is parts and len(angles) == 2
    assert all(0 <= a < 2 * np.pi for pair in angles for a in pair)


def test_spearman_within_graphs():
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0) and np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    # pooled the score tracks the graphs' levels; inside each graph it ranks backwards
    scores, rho, graphs = [3, 2, 1, 13, 12, 11], [0.1, 0.2, 0.3, 0.7, 0.8, 0.9], list("aaabbb")
    assert spearman(scores, rho) > 0.5 and mean_within_spearman(scores, rho, graphs) == pytest.approx(-1.0)
    assert np.isnan(mean_within_spearman([1, 1], [1, 2], ["a", "a"]))


def test_graphs_without_a_defined_ranking_are_left_out_of_c3():
    heldout = heldout_rows() + [{"graph": "g2", "rho": 0.5, "rho_hat": 0.6 + 0.1 * k, "intra_share": 0.1 * k,
                                 "modularity": 0.0} for k in range(3)]  # constant rho: no ranking to judge
    names, table = spearman_table(heldout)
    assert names == ["g0", "g1"] and table.shape == (2, 3)
