"""zovh's profiles: every profile validates, and the descent comparison is refused unless every method spends the
same queries per iteration."""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.zovh.params import Params
from tasks.core.params import ParamsError, load_paper_params, profile_values, validate
from tasks.core.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates_and_runs_s2_and_scd(profile):
    params = load_paper_params(ROOT, "zovh", profile, Params)
    assert {"s2", "scd"} <= {m.kind for m in params.optimisation.methods}


def test_full_runs_the_hessian_study_at_the_papers_dimension():
    assert load_paper_params(ROOT, "zovh", "full", Params).hessian.d == 5000


def with_descent(**changes) -> dict:
    values = profile_values(ROOT, "zovh", "smoke")
    values["optimisation"] |= changes
    return values


@pytest.mark.parametrize("changes,message", [
    ({"K": 4}, "same queries per iteration"),  # scd spends 3 at K = 4
    ({"methods": [{"name": "zo_sgd", "kind": "zo_sgd", "histories": 2}]}, "cannot reuse"),
])
def test_unequal_or_impossible_descent_methods_are_refused(changes, message):
    with pytest.raises(ParamsError, match=message):
        validate(Params, with_descent(**changes), "zovh.smoke")
