"""The claim checks decide from the numbers they are given, and only where the profile allows."""
import pytest

from flows.se3_sync.claims import accuracy_claim, efficiency_claim, registration_claim


def rows(family, errors):
    """errors: {(method, sigma): [per-trial rot_median]}; translation = rotation / 10."""
    return [{"family": family, "method": m, "sigma": s, "trial": k, "rot_median": e, "trans_median": e / 10}
            for (m, s), values in errors.items() for k, e in enumerate(values)]


@pytest.mark.parametrize("dq_error, passed", [(1.04, True), (1.06, False)])
def test_accuracy_claim_takes_the_worst_noise_level(dq_error, passed):
    data = rows("geometric", {("eig", 0.1): [1.0], ("dqgpm", 0.1): [0.5], ("eig", 0.2): [1.0], ("dqgpm", 0.2): [dq_error],
                              ("dq_spectral", 0.1): [1.0], ("dq_spectral", 0.2): [1.0]})
    claim = accuracy_claim(data, 1.05, True, "test")
    assert claim.ours == pytest.approx(dq_error) and claim.passed is passed
    assert claim.details["rot_median"]["0.1"]["ratio_vs_dq_spectral"] == pytest.approx(0.5)
    assert accuracy_claim(data, 1.05, False, "test").passed is None


def test_efficiency_claim_uses_single_thread_medians():
    timing = [{"purpose": "claim", "blas_threads": threads, "method": m, "times": times}
              for threads, m, times in [(1, "dqgpm", [2.0, 4.0, 3.0]), (1, "eig", [1.0]),
                                        ("default", "dqgpm", [1.0]), ("default", "eig", [4.0])]]
    claim = efficiency_claim(timing, True, "test")
    assert claim.ours == pytest.approx(3.0) and claim.passed is False
    assert claim.details["ratio_blas_default_threads"] == pytest.approx(0.25)


def test_registration_claim_also_needs_to_beat_chaining():
    data = rows("scans", {("dqgpm", 0.0): [2.0], ("eig", 0.0): [2.0], ("chain", 0.0): [1.0]})
    claim = registration_claim(data, 1.05, True, "test")
    assert claim.ours == pytest.approx(1.0) and claim.passed is False
    assert claim.details["rot_ratio_vs_chain"] == pytest.approx(2.0)
