"""LiMuon's calibration params: AdamW is calibrated like Muon whenever it runs, with a grid of the same shape."""
from __future__ import annotations

import copy

import pytest

from flows.limuon.params import Params
from tasks.core.params import ParamsError, load_paper_params, profile_values, validate
from tests.conftest import ROOT

DEFAULT = profile_values(ROOT, "limuon", "default")


def test_profiles_calibrate_every_char_lm_method_that_runs():
    for profile in ("smoke", "default", "full"):
        params = load_paper_params(ROOT, "limuon", profile, Params)
        grids = params.calibration.grids()
        assert ("adamw" in grids) == ("adamw" in params.charlm.optimizers)
        assert len({len(grid) for grid in grids.values()}) == 1


@pytest.mark.parametrize(("grids", "message"), [
    ({"muon": [0.01, 0.02, 0.04]}, "calibration.adamw: AdamW runs on the char-LM"),
    ({"muon": [0.01, 0.02, 0.04], "adamw": [3e-3]}, "same number of points"),
    ({"muon": [0.04, 0.02, 0.01], "adamw": [1e-3, 3e-3, 1e-2]}, "strictly increasing"),
])
def test_a_missing_unequal_or_unsorted_grid_is_refused(grids, message):
    data = copy.deepcopy(DEFAULT)
    data["calibration"] = {"steps": 200, "seed": 0, **grids}
    with pytest.raises(ParamsError) as raised:
        validate(Params, data, "limuon.default")
    assert any(message in line for line in raised.value.problems), raised.value.problems
