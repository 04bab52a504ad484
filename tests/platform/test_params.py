"""Params are validated into typed objects; a bad key, type or value is named with its path."""
import pytest

from flows.se3_sync.params import Params as Se3SyncParams
from stages.spec import paper_pipeline, papers
from tasks.core.params import PROFILES, ParamsError, active_profile, load_paper_params, read_yaml, validate
from tests.conftest import ROOT


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("paper", papers(ROOT))
def test_every_profile_of_every_paper_validates(paper, profile):
    model = paper_pipeline(paper).Params
    assert isinstance(load_paper_params(ROOT, paper, profile, model), model)


def default_profile() -> dict:
    return read_yaml(ROOT / "stages" / "se3_sync" / "params.yaml")["se3_sync"]["default"]


def problems(data: dict) -> list[str]:
    with pytest.raises(ParamsError) as raised:
        validate(Se3SyncParams, data, "se3_sync.default")
    return raised.value.problems


def test_negative_noise_level_names_key_rule_and_value():
    data = default_profile() | {"noise_levels": [0.02, 0.05, -0.1]}
    assert problems(data) == ["se3_sync.default.noise_levels[2]: must be >= 0, got -0.1"]


def test_unknown_key_wrong_type_and_missing_key_are_all_reported():
    data = default_profile() | {"nodes": 5, "seeds": "ten"}
    data.pop("p")
    found = problems(data)
    assert "se3_sync.default.nodes: unknown key, got 5" in found
    assert any(line.startswith("se3_sync.default.seeds: ") and line.endswith("got 'ten'") for line in found)
    assert "se3_sync.default.p: required key is missing" in found


def test_nested_key_path_and_literal_rule():
    data = default_profile() | {"methods": ["dqgpm", "sdp"]}
    data["scans"] = dict(data["scans"], n_scans=2)
    found = problems(data)
    assert "se3_sync.default.scans.n_scans: must be >= 3, got 2" in found
    assert any(line.startswith("se3_sync.default.methods[1]: must be one of") for line in found)


def test_a_papers_own_rule_reads_like_the_others():
    data = default_profile() | {"methods": ["dqgpm", "chain"]}
    assert problems(data) == ["se3_sync.default.methods: must include dqgpm and eig (the claims compare them), "
                              "got ['dqgpm', 'chain']"]


def test_unknown_profile_is_refused(tmp_path):
    (tmp_path / "params.yaml").write_text("profile: huge\n")
    with pytest.raises(ParamsError, match=r"profile: must be one of \('smoke', 'default', 'full'\), got 'huge'"):
        active_profile(tmp_path)


@pytest.mark.parametrize("value", [True, "2", 2.0])
def test_no_silent_coercion_a_bool_string_or_float_is_not_an_int(value):
    assert problems(default_profile() | {"seeds": value}) == [
        f"se3_sync.default.seeds: input should be a valid integer, got {value!r}"]


def test_an_int_is_still_a_float_and_a_yaml_list_fills_a_fixed_length_tuple():
    from flows.s_adam.params import RosenbrockTask

    data = default_profile() | {"p": 1}
    assert validate(Se3SyncParams, data, "se3_sync.default").p == 1.0
    task = validate(RosenbrockTask, {"steps": 5, "start": [-1, 2.0], "optimizers": {}}, "rosenbrock")
    assert task.start == (-1.0, 2.0)
    with pytest.raises(ParamsError, match=r"rosenbrock.start\[0\]: input should be a valid number, got '-1'"):
        validate(RosenbrockTask, {"steps": 5, "start": ["-1", 2.0], "optimizers": {}}, "rosenbrock")
