"""SoftSignum's clamp controls: names, hyperparameters, the clamp-use record, and claims that report controls
beside SoftSignum, scored by the claim's own interval, without letting them decide."""
from __future__ import annotations

import numpy as np
import pytest

from flows.softsignum.claims import evaluate_claims
from flows.softsignum.experiments import clamp_use, hyperparameters, quad_het_run
from flows.softsignum.params import Params
from flows.softsignum.variants import UNCLAMPED_TAU_MAX, hardswitch_control, parse_variant
from tasks.core.params import ParamsError, load_paper_params, profile_values, validate
from tasks.train.synthetic import quadratic_heterogeneous
from tests.conftest import ROOT

OPTIONS = {"momentum": 0.9, "dampening": 0.9, "alpha_sign": 0.5, "eps": 1e-4, "tau_max": 20.0}


def test_variant_names():
    assert parse_variant("hardswitch_x20").base == "hardswitch" and parse_variant("hardswitch_x20").overrides == {
        "switch_scale": 20.0}
    assert parse_variant("softsignum_unclamped").overrides == {"tau_max": UNCLAMPED_TAU_MAX}
    assert not parse_variant("softsignum").is_control and parse_variant("hardswitch_x2.5").is_control
    assert hardswitch_control(20.0) == "hardswitch_x20"
    for bad in ("hardswitch_x", "hardswitch_x0", "softmuon_unclamped", "sgd"):
        with pytest.raises(ValueError, match="optimizer"):
            parse_variant(bad)


def test_controls_set_their_one_hyperparameter_and_softmuon_keeps_its_clamp():
    base = hyperparameters("hardswitch", lr=0.01, total_steps=10, options=OPTIONS)
    assert hyperparameters("hardswitch_x20", lr=0.01, total_steps=10, options=OPTIONS) == base | {"switch_scale": 20.0}
    soft = hyperparameters("softsignum", lr=0.01, total_steps=10, options=OPTIONS)
    assert soft["tau_max"] == 20.0
    assert hyperparameters("softsignum_unclamped", lr=0.01, total_steps=10, options=OPTIONS) == soft | {"tau_max": 1e9}
    muon_options = {"momentum": 0.95, "alpha_sign": 0.9, "tau_max": 20.0}  # SoftSignum's clamp does not reach SoftMuon
    assert hyperparameters("softmuon", lr=0.02, total_steps=10, options=muon_options)["tau_max"] == 1e9


def test_clamp_use_counts_schedule_entries_at_tau_max_and_saturation_after_t_sign():
    curve = [{"step": k, "saturated_fraction": f} for k, f in ((1, 1.0), (2, 1.0), (3, 0.5), (4, 0.0))]
    assert clamp_use([20.0, 20.0, 5.0, 1.0], 20.0, curve, 2) == {
        "tau_max": 20.0, "schedule_at_tau_max": 0.5, "saturated_after_t_sign": 0.25}
    assert clamp_use(None, None, curve, None) == {"tau_max": None, "schedule_at_tau_max": None,
                                                   "saturated_after_t_sign": None}


@pytest.fixture(scope="module")
def quad_records():
    """Three seeds (an instance each), as the train stage runs them: enough for the claims' paired bootstrap."""
    return [quad_het_run(quadratic_heterogeneous(50, seed=seed), name, seed, steps=40, lr=0.01, noise_std=0.01,
                         options=OPTIONS) | {"seed": seed}
            for seed in range(3) for name in ("signum", "softsignum", "hardswitch", "hardswitch_x20", "softsignum_unclamped")]


def test_control_runs_follow_signum_until_t_sign_and_record_their_clamp(quad_records):
    by_name = {r["optimizer"]: r for r in quad_records if r["seed"] == 0}
    t_sign = by_name["softsignum"]["t_sign"]
    assert t_sign == 20 and by_name["hardswitch_x20"]["switch_scale"] == 20.0
    sign = [row["loss"] for row in by_name["signum"]["curve"][:t_sign]]
    for name in ("softsignum", "hardswitch_x20", "softsignum_unclamped"):
        assert [row["loss"] for row in by_name[name]["curve"][:t_sign]] == sign
    after = {name: by_name[name]["curve"][t_sign + 1]["loss"] for name in ("hardswitch", "hardswitch_x20")}
    assert after["hardswitch"] != after["hardswitch_x20"] and np.isfinite(after["hardswitch_x20"])  # u = 20 d
    unclamped = by_name["softsignum_unclamped"]
    assert unclamped["tau_max"] == 1e9 and unclamped["schedule"][0] == 1e9
    assert unclamped["schedule_at_tau_max"] == pytest.approx(1 / len(unclamped["schedule"]))  # only tau_0 (q_0 = 0)
    assert 0 <= by_name["softsignum"]["saturated_after_t_sign"] <= 1 and by_name["signum"]["tau_max"] is None


def _records(quad_records: list[dict], *, with_controls: bool) -> list[dict]:
    return [r for r in quad_records if with_controls or not parse_variant(r["optimizer"]).is_control]


def test_controls_are_reported_beside_softsignum_and_never_decide(quad_records):
    claims, metrics = evaluate_claims(_records(quad_records, with_controls=True), deciding=True)
    bare, _ = evaluate_claims(_records(quad_records, with_controls=False), deciding=True)
    c1 = claims[0]
    assert (c1.verdict, c1.ours) == (bare[0].verdict, bare[0].ours) and c1.verdict.word != "undecided"
    assert set(c1.details["controls"]) == {"hardswitch_x20", "softsignum_unclamped"}
    control = c1.details["controls"]["hardswitch_x20"]
    assert control["ratio_to_signum"] == pytest.approx(control["terminal_loss"] / c1.details["signum"])
    assert control["verdict"] in ("pass", "fail", "inconclusive") and len(control["interval"]) == 2
    assert control["meets_claim"] == {"pass": True, "fail": False}.get(control["verdict"])
    assert metrics["control.C1.hardswitch_x20.ratio_to_signum"] == control["ratio_to_signum"]
    assert c1.details["clamp"]["softsignum"]["tau_max"] == 20.0
    assert metrics["quad_het.softsignum_unclamped.schedule_at_tau_max"] == pytest.approx(1 / 20)
    assert metrics["pre_transition.gap.quad_het/hardswitch_x20"] == 0.0 and metrics["pre_transition.coincide"] == 1.0
    undecided, _ = evaluate_claims(_records(quad_records, with_controls=True), deciding=False)
    assert undecided[0].verdict.word == "undecided"
    assert undecided[0].details["controls"]["hardswitch_x20"]["meets_claim"] is None


def _profile(name: str = "default") -> dict:
    return profile_values(ROOT, "softsignum", name)


def problems(data: dict) -> list[str]:
    with pytest.raises(ParamsError) as raised:
        validate(Params, data, "softsignum.default")
    return raised.value.problems


def test_every_profile_runs_both_controls_where_softsignum_runs():
    for profile in ("smoke", "default", "full"):
        params = load_paper_params(ROOT, "softsignum", profile, Params)
        for task in (params.quad_het, params.charlm):
            assert {"softsignum", "hardswitch_x20", "softsignum_unclamped"} <= set(task.optimizers)
            assert task.tau_max == 20.0


def test_params_refuse_a_wrong_control_an_uncalibrated_lion_and_unequal_grids():
    data = _profile()
    data["quad_het"]["optimizers"] = ["signum", "softsignum", "hardswitch", "hardswitch_x5"]
    assert any("the HardSwitch control is hardswitch_x20" in line for line in problems(data))
    data = _profile()
    data["charlm"]["optimizers"] = [*data["charlm"]["optimizers"], "lion"]
    assert any("calibration.lion" in line for line in problems(data))
    data = _profile()
    data["calibration"]["muon"] = [0.02]
    assert any("same number of points" in line for line in problems(data))
    data = _profile()
    data["quad_het"]["optimizers"] = ["signum", "muon"]
    assert any("quad_het.optimizers" in line for line in problems(data))
