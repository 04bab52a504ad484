"""The claim checks decide on bootstrap intervals of the numbers they are given (pass, fail, inconclusive), and only
where the profile allows; runs that stopped at max_iter are reported by the claims they feed."""
import math

import numpy as np
import pytest

from flows.se3_sync.claims import accuracy_claim, curve_ratios, efficiency_claim, not_converged, registration_claim


def rows(family, errors, not_converged=()):
    """errors: {(method, sigma): [per-trial rot_median]}; translation = rotation / 10. Runs keyed
    (method, sigma, trial) in not_converged stopped at max_iter."""
    return [{"family": family, "method": m, "sigma": s, "trial": k, "rot_median": e, "trans_median": e / 10,
             "iterations": 10, "converged": (m, s, k) not in not_converged}
            for (m, s), values in errors.items() for k, e in enumerate(values)]


def noisy(centre, width, n=10):
    """n per-trial errors spread evenly around `centre`, in trial order."""
    return list(np.linspace(centre - width, centre + width, n))


@pytest.mark.parametrize(("dq_error", "width", "word"), [(1.0, 0.01, "pass"), (1.1, 0.01, "fail"), (1.05, 0.2, "inconclusive")])
def test_accuracy_claim_takes_the_worst_noise_level(dq_error, width, word):
    eig = noisy(1.0, 0.2)
    data = rows("geometric", {("eig", 0.1): eig, ("dqgpm", 0.1): [0.5 * e for e in eig], ("eig", 0.2): eig,
                              ("dqgpm", 0.2): [e * dq_error + d for e, d in zip(eig, noisy(0.0, width))],
                              ("dq_spectral", 0.1): eig, ("dq_spectral", 0.2): eig})
    claim = accuracy_claim(data, 1.05, 0, True, "test")
    assert claim.ours == pytest.approx(dq_error, rel=0.02) and claim.verdict.word == word
    assert claim.verdict.interval.n == 20 and "10 and 10 paired trials" in claim.verdict.interval.method
    assert claim.details["rot_median"]["0.1"]["ratio_vs_dq_spectral"] == pytest.approx(0.5)
    assert claim.details["trials_per_level"] == [10, 10]
    assert accuracy_claim(data, 1.05, 0, False, "test").verdict.word == "undecided"
    assert not_converged(claim.details) == 0


def test_accuracy_claim_names_runs_that_hit_max_iter():
    data = rows("geometric", {("eig", 0.1): [1.0, 1.0], ("dqgpm", 0.1): [1.0, 1.0]}, not_converged={("dqgpm", 0.1, 1)})
    claim = accuracy_claim(data, 1.05, 0, True, "test")
    assert claim.details["convergence"]["dqgpm"]["not_converged"] == ["sigma=0.1 trial=1"]
    assert not_converged(claim.details) == 1


def timing_row(purpose, method, times, n=40, p=0.1, family="er", converged=True, trial=0):
    return {"instance": f"timing_{purpose}_n{n}_p{p:g}_t{trial}", "purpose": purpose, "family": family, "n": n, "p": p,
            "edges": 4 * n, "blas_threads": 1, "method": method, "times": times, "iterations": 7,
            "power_iterations": 5, "converged": converged}


def cell(n, p, dqgpm, eig, eig_matched, graphs=3):
    """One C2 cell: per graph, each variant's alternated rounds (the same for every graph)."""
    return [timing_row("claim", m, times, n=n, p=p, trial=k) for k in range(graphs)
            for m, times in (("dqgpm", dqgpm), ("eig", eig), ("eig_matched", eig_matched))]


@pytest.mark.parametrize(("worst", "word"), [(noisy(0.8, 0.1, 3), "pass"), (noisy(1.3, 0.1, 3), "fail"),
                                             (noisy(1.0, 0.5, 3), "inconclusive")])
def test_efficiency_claim_is_decided_by_its_worst_cell(worst, word):
    timing = (cell(200, 0.1, noisy(0.3, 0.1, 3), [2.0] * 3, [1.0] * 3)
              + cell(400, 0.05, worst, [1.0] * 3, noisy(2.0, 0.1, 3)))
    claim = efficiency_claim(timing, True, "test")
    assert claim.verdict.word == word and claim.details["worst_cell"] == {"n": 400, "p": 0.05}
    assert claim.ours == pytest.approx(np.median(worst))  # over the stock EIG's 1.0, the faster in every round
    assert "n=400, p=0.05 decides" in claim.verdict.reason and "of 2 parts pass" in claim.verdict.reason
    assert claim.verdict.interval.n == 9 and "order-statistic interval" in claim.verdict.interval.method
    assert [len(c["ratios"]) for c in claim.details["cells"]] == [9, 9]
    assert efficiency_claim(timing, False, "test").verdict.word == "undecided"


def test_efficiency_claim_pairs_each_round_with_that_rounds_faster_eig():
    timing = cell(200, 0.1, [1.0, 1.0, 1.0], [2.0, 0.5, 4.0], [4.0, 4.0, 1.0], graphs=1)
    (only,) = efficiency_claim(timing, True, "test").details["cells"]
    assert only["ratios"] == [0.5, 2.0, 1.0] and only["ratio_median"] == 1.0


def test_efficiency_claim_with_fewer_than_nine_rounds_is_inconclusive():
    claim = efficiency_claim(cell(200, 0.1, [0.1, 0.1], [1.0, 1.0], [1.0, 1.0]), True, "test")
    assert claim.verdict.word == "inconclusive" and "fewer than 9 repeats" in claim.verdict.reason


def test_efficiency_claim_reports_timed_runs_that_hit_max_iter_and_the_chain_starts():
    timing = cell(200, 0.1, [1.0] * 3, [2.0] * 3, [2.0] * 3, graphs=1)
    timing[0]["converged"] = False
    timing += [timing_row("curve", "dqgpm", [1.0], n=100, family="chain", converged=False),
               timing_row("curve", "dqgpm_spectral_start", [3.0], n=100, family="chain", converged=False),
               timing_row("curve", "eig", [2.0], n=100, family="chain")]
    claim = efficiency_claim(timing, True, "test")
    assert not_converged(claim.details) == 1
    (curve,) = curve_ratios(timing)
    assert (curve["family"], curve["n"], curve["stronger_eig"]) == ("chain", 100, "eig")
    assert curve["ratio_dqgpm_over_eig"] == pytest.approx(0.5)
    assert curve["ratio_dqgpm_spectral_start_over_eig"] == pytest.approx(1.5)
    assert curve["dqgpm_not_converged"] == 1 and curve["dqgpm_spectral_start_not_converged"] == 1


@pytest.mark.parametrize(("dq_trans", "word"), [(noisy(0.1, 0.001, 5), "pass"), (noisy(0.12, 0.001, 5), "fail"),
                                                ([0.08, 0.09, 0.105, 0.12, 0.13], "inconclusive")])
def test_registration_claim_is_decided_on_the_scan_trials(dq_trans, word):
    data = rows("scans", {("dqgpm", 0.0): [1.0] * 5, ("eig", 0.0): [1.0] * 5, ("chain", 0.0): [2.0] * 5})
    for row, trans in zip((r for r in data if r["method"] == "dqgpm"), dq_trans):
        row["trans_median"] = trans  # EIG's is 0.1
    claim = registration_claim(data, 1.05, 0, True, "test")
    assert claim.verdict.word == word and claim.details["trials"] == 5
    assert registration_claim(data, 1.05, 0, False, "test").verdict.word == "undecided"


def test_registration_claim_also_needs_to_beat_chaining():
    data = rows("scans", {("dqgpm", 0.0): [2.0, 2.1], ("eig", 0.0): [2.0, 2.1], ("chain", 0.0): [1.0, 1.1]})
    claim = registration_claim(data, 1.05, 0, True, "test")
    assert claim.ours == pytest.approx(1.0) and claim.verdict.word == "fail"
    assert claim.verdict.interval.low == math.inf and "above chaining's counting as +inf" in claim.verdict.interval.method
    assert claim.details["rot_ratio_vs_chain"] == pytest.approx(2.05 / 1.05)  # medians of two trials
