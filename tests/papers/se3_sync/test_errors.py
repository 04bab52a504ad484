"""The error tables aggregate per noise level: median over trials of the per-trial medians."""
from flows.se3_sync.errors import error_curve, median_by, wide_curve
from tests.papers.se3_sync.test_claims import rows


def test_median_over_trials_per_noise_level():
    data = rows("geometric", {("eig", 0.1): [1.0, 3.0, 2.0], ("eig", 0.2): [5.0]})
    assert median_by(data, "geometric", "eig", "rot_median") == {0.1: 2.0, 0.2: 5.0}
    assert median_by(data, "geometric", "dqgpm", "rot_median") == {}


def test_wide_curve_has_one_column_per_method():
    data = rows("geometric", {("eig", 0.1): [1.0], ("dqgpm", 0.1): [2.0]})
    wide = wide_curve(error_curve(data, ["geometric"], ["dqgpm", "eig"]), "geometric")
    assert wide == [{"sigma": 0.1, "dqgpm_rot_deg": 2.0, "dqgpm_trans": 0.2, "eig_rot_deg": 1.0, "eig_trans": 0.1}]
