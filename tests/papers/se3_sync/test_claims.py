"""The claim checks decide from the numbers they are given, and only where the profile allows;
runs that stopped at max_iter are reported by the claims they feed."""
import pytest

from flows.se3_sync.claims import accuracy_claim, curve_ratios, efficiency_claim, not_converged, registration_claim


def rows(family, errors, not_converged=()):
    """errors: {(method, sigma): [per-trial rot_median]}; translation = rotation / 10. Runs keyed
    (method, sigma, trial) in not_converged stopped at max_iter."""
    return [{"family": family, "method": m, "sigma": s, "trial": k, "rot_median": e, "trans_median": e / 10,
             "iterations": 10, "converged": (m, s, k) not in not_converged}
            for (m, s), values in errors.items() for k, e in enumerate(values)]


@pytest.mark.parametrize("dq_error, passed", [(1.04, True), (1.06, False)])
def test_accuracy_claim_takes_the_worst_noise_level(dq_error, passed):
    data = rows("geometric", {("eig", 0.1): [1.0], ("dqgpm", 0.1): [0.5], ("eig", 0.2): [1.0], ("dqgpm", 0.2): [dq_error],
                              ("dq_spectral", 0.1): [1.0], ("dq_spectral", 0.2): [1.0]})
    claim = accuracy_claim(data, 1.05, True, "test")
    assert claim.ours == pytest.approx(dq_error) and claim.passed is passed
    assert claim.details["rot_median"]["0.1"]["ratio_vs_dq_spectral"] == pytest.approx(0.5)
    assert accuracy_claim(data, 1.05, False, "test").passed is None
    assert not_converged(claim.details) == 0


def test_accuracy_claim_names_runs_that_hit_max_iter():
    data = rows("geometric", {("eig", 0.1): [1.0, 1.0], ("dqgpm", 0.1): [1.0, 1.0]}, not_converged={("dqgpm", 0.1, 1)})
    claim = accuracy_claim(data, 1.05, True, "test")
    assert claim.details["convergence"]["dqgpm"]["not_converged"] == ["sigma=0.1 trial=1"]
    assert not_converged(claim.details) == 1


def timing_row(purpose, threads, method, times, n=40, family="er", converged=True):
    return {"instance": f"timing_{purpose}_n{n}_t0", "purpose": purpose, "family": family, "n": n, "edges": 4 * n,
            "blas_threads": threads, "method": method, "times": times, "iterations": 7, "power_iterations": 5,
            "converged": converged}


def test_efficiency_claim_uses_single_thread_medians_and_the_stronger_eig():
    timing = [timing_row("claim", threads, m, times)
              for threads, m, times in [(1, "dqgpm", [2.0, 4.0, 3.0]), (1, "eig", [1.5]), (1, "eig_matched", [1.0]),
                                        ("default", "dqgpm", [1.0]), ("default", "eig", [4.0]),
                                        ("default", "eig_matched", [5.0])]]
    claim = efficiency_claim(timing, True, "test")
    assert claim.ours == pytest.approx(3.0) and claim.passed is False
    assert claim.details["stronger_eig"] == "eig_matched" and claim.details["ratio_vs_stock_eig"] == pytest.approx(2.0)
    assert claim.details["ratio_blas_default_threads"] == pytest.approx(0.25)
    assert claim.details["dqgpm_iterations"] == [7] and not_converged(claim.details) == 0


def test_efficiency_claim_reports_timed_runs_that_hit_max_iter():
    timing = [timing_row("claim", 1, "dqgpm", [1.0], converged=False), timing_row("claim", 1, "eig", [2.0]),
              timing_row("claim", "default", "dqgpm", [1.0]), timing_row("claim", "default", "eig", [2.0]),
              timing_row("curve", 1, "dqgpm", [3.0], n=100, family="chain", converged=False),
              timing_row("curve", 1, "dqgpm_tree", [1.0], n=100, family="chain", converged=False),
              timing_row("curve", 1, "eig", [2.0], n=100, family="chain")]
    claim = efficiency_claim(timing, True, "test")
    assert not_converged(claim.details) == 1
    (curve,) = curve_ratios(timing)
    assert (curve["family"], curve["n"], curve["stronger_eig"]) == ("chain", 100, "eig")
    assert curve["ratio_dqgpm_over_eig"] == pytest.approx(1.5) and curve["ratio_dqgpm_tree_over_eig"] == pytest.approx(0.5)
    assert curve["dqgpm_not_converged"] == 1 and curve["dqgpm_tree_not_converged"] == 1


def test_registration_claim_also_needs_to_beat_chaining():
    data = rows("scans", {("dqgpm", 0.0): [2.0], ("eig", 0.0): [2.0], ("chain", 0.0): [1.0]})
    claim = registration_claim(data, 1.05, True, "test")
    assert claim.ours == pytest.approx(1.0) and claim.passed is False
    assert claim.details["rot_ratio_vs_chain"] == pytest.approx(2.0)
