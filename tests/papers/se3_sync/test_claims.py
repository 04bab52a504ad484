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


def timing_row(purpose, threads, method, times, n=40, family="er", converged=True):
    return {"instance": f"timing_{purpose}_n{n}_t0", "purpose": purpose, "family": family, "n": n, "edges": 4 * n,
            "blas_threads": threads, "method": method, "times": times, "iterations": 7, "power_iterations": 5,
            "converged": converged}


def test_efficiency_claim_uses_single_thread_medians_and_the_stronger_eig():
    timing = [timing_row("claim", threads, m, times)
              for threads, m, times in [(1, "dqgpm", [2.0, 4.0, 3.0]), (1, "eig", [1.5] * 3),
                                        (1, "eig_matched", [1.0] * 3), ("default", "dqgpm", [1.0] * 3),
                                        ("default", "eig", [4.0] * 3), ("default", "eig_matched", [5.0] * 3)]]
    claim = efficiency_claim(timing, 0, True, "test")
    assert claim.ours == pytest.approx(3.0) and claim.verdict.word == "fail"
    assert claim.details["stronger_eig"] == "eig_matched" and claim.details["ratio_vs_stock_eig"] == pytest.approx(2.0)
    assert claim.details["ratio_blas_default_threads"] == pytest.approx(0.25)
    assert claim.details["dqgpm_iterations"] == [7] and not_converged(claim.details) == 0


def test_efficiency_claim_reports_timed_runs_that_hit_max_iter():
    timing = [timing_row("claim", 1, "dqgpm", [1.0, 1.1], converged=False), timing_row("claim", 1, "eig", [2.0, 2.1]),
              timing_row("claim", "default", "dqgpm", [1.0]), timing_row("claim", "default", "eig", [2.0]),
              timing_row("curve", 1, "dqgpm", [3.0], n=100, family="chain", converged=False),
              timing_row("curve", 1, "dqgpm_tree", [1.0], n=100, family="chain", converged=False),
              timing_row("curve", 1, "eig", [2.0], n=100, family="chain")]
    claim = efficiency_claim(timing, 0, True, "test")
    assert not_converged(claim.details) == 1
    (curve,) = curve_ratios(timing)
    assert (curve["family"], curve["n"], curve["stronger_eig"]) == ("chain", 100, "eig")
    assert curve["ratio_dqgpm_over_eig"] == pytest.approx(1.5) and curve["ratio_dqgpm_tree_over_eig"] == pytest.approx(0.5)
    assert curve["dqgpm_not_converged"] == 1 and curve["dqgpm_tree_not_converged"] == 1


def claim_timing(dqgpm, eig, eig_matched, instances=3):
    """The claim's timed runs: per instance, each variant's repeats (the same for every instance)."""
    return [timing_row("claim", threads, m, times, n=40 + k) for k in range(instances) for threads in (1, "default")
            for m, times in (("dqgpm", dqgpm), ("eig", eig), ("eig_matched", eig_matched))]


@pytest.mark.parametrize(("dqgpm", "word"), [(noisy(0.5, 0.1, 5), "pass"), (noisy(1.5, 0.1, 5), "fail"),
                                             (noisy(1.0, 0.5, 5), "inconclusive")])
def test_efficiency_claim_is_decided_on_a_paired_bootstrap_of_the_timed_runs(dqgpm, word):
    claim = efficiency_claim(claim_timing(dqgpm, noisy(2.0, 0.1, 5), noisy(1.0, 0.1, 5)), 0, True, "test")
    assert claim.verdict.word == word and claim.details["timed_runs"] == 15
    assert "paired bootstrap over 15 timed runs" in claim.verdict.interval.method
    assert claim.ours == pytest.approx(np.median(dqgpm))  # over the matched EIG's median, 1.0
    assert efficiency_claim(claim_timing(dqgpm, [2.0], [1.0]), 0, False, "test").verdict.word == "undecided"


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
