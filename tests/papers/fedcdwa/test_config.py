"""One run config: the params file and the CLI build the same FedConfig, checked by the same field rules; every
method name the config accepts has exactly one declaration."""
from __future__ import annotations

import pytest

from flows.fedcdwa.cli import run_config
from flows.fedcdwa.config import METHOD_NAMES, FedConfig
from flows.fedcdwa.methods import METHODS
from flows.fedcdwa.params import Params
from tasks.core.inputs import InputError
from tasks.core.params import ParamsError, load_paper_params, validate
from tests.conftest import ROOT


def smoke() -> Params:
    return load_paper_params(ROOT, "fedcdwa", "smoke", Params)


def problems(**changes) -> list[str]:
    with pytest.raises(ParamsError) as raised:
        validate(Params, smoke().model_dump(exclude_unset=True) | changes, "fedcdwa.smoke")
    return raised.value.problems


def test_every_method_name_is_declared_once():
    assert sorted(METHODS) == sorted(METHOD_NAMES)


def test_params_and_cli_build_the_same_config():
    params = smoke()
    assert params.local_epochs == params.personal_epochs  # the CLI sets E_p = E
    for method in params.methods:
        assert params.config(method) == run_config(method, params.rounds, params.local_epochs)


def test_an_ablation_changes_only_its_switch():
    params = smoke().model_copy(update={"ablations": ["hwa_gauss"]})
    full, gauss = params.config("fedcdwa"), params.config("fedcdwa", "hwa_gauss")
    assert gauss.support == 1 and gauss.model_copy(update={"support": full.support}) == full


def test_hyper_values_follow_the_field_rules():
    assert problems(hyper={"lr": 0, "support": 0}) == ["fedcdwa.smoke.hyper.lr: must be > 0, got 0",
                                                       "fedcdwa.smoke.hyper.support: must be >= 1, got 0"]
    assert problems(hyper={"lam_kd": "0.1"})[0].startswith("fedcdwa.smoke.hyper.lam_kd: ")
    assert problems(hyper={"lamda": 1.0}) == ["fedcdwa.smoke.hyper.lamda: unknown key, got 1.0"]


def test_hyper_cannot_set_what_each_run_sets():
    assert "hyper.rounds: set per run" in problems(hyper={"rounds": 5})[0]


def test_cli_names_the_option_of_a_bad_config_value():
    with pytest.raises(InputError, match=r"^--local-epochs: must be <= 100, got 101$"):
        run_config("fedcdwa", 3, 101)


def test_config_crosses_json_unchanged():  # the Flower engine sends it as JSON
    cfg = FedConfig(method="fedproto", lam_kd=5, lr=0.01)
    assert FedConfig.model_validate_json(cfg.model_dump_json()) == cfg
