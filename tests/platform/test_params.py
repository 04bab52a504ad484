"""Params are validated into typed objects; a bad key, type or value is named with its path."""
import re
from typing import Annotated, Literal

import pytest
import yaml
from pydantic import Field, field_validator

from stages.spec import paper_pipeline, papers
from tasks.core.params import (
    LIST_AS_TUPLE,
    PROFILES,
    Params,
    ParamsError,
    active_profile,
    load_paper_params,
    profile_values,
    validate,
)
from tests.conftest import ROOT


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("paper", papers(ROOT))
def test_every_profile_of_every_paper_validates(paper, profile):
    model = paper_pipeline(paper).Params
    assert isinstance(load_paper_params(ROOT, paper, profile, model), model)


class Scans(Params):
    n_scans: int = Field(ge=3)


class Example(Params):
    """A paper's params as the platform meets them: bounds, lists, literals, a section, a pair and a rule of its own."""

    p: float = Field(gt=0, le=1)
    noise_levels: list[Annotated[float, Field(ge=0)]] = Field(min_length=1)
    seeds: int = Field(ge=1)
    methods: list[Literal["dqgpm", "eig", "chain"]] = Field(min_length=1)
    scans: Scans
    start: Annotated[tuple[float, float], LIST_AS_TUPLE]

    @field_validator("methods")
    @classmethod
    def _claims_need_dqgpm(cls, methods: list[str]) -> list[str]:
        if "dqgpm" not in methods:
            raise ValueError("must include dqgpm (the claims use it)")
        return methods


def default_profile() -> dict:
    return {"p": 0.5, "noise_levels": [0.05], "seeds": 2, "methods": ["dqgpm", "eig"], "scans": {"n_scans": 4},
            "start": [-1, 2.0]}


def problems(data: dict) -> list[str]:
    with pytest.raises(ParamsError) as raised:
        validate(Example, data, "paper.default")
    return raised.value.problems


def test_negative_noise_level_names_key_rule_and_value():
    data = default_profile() | {"noise_levels": [0.02, 0.05, -0.1]}
    assert problems(data) == ["paper.default.noise_levels[2]: must be >= 0, got -0.1"]


def test_unknown_key_wrong_type_and_missing_key_are_all_reported():
    data = default_profile() | {"nodes": 5, "seeds": "ten"}
    data.pop("p")
    found = problems(data)
    assert "paper.default.nodes: unknown key, got 5" in found
    assert any(line.startswith("paper.default.seeds: ") and line.endswith("got 'ten'") for line in found)
    assert "paper.default.p: required key is missing" in found


def test_nested_key_path_and_literal_rule():
    data = default_profile() | {"methods": ["dqgpm", "sdp"], "scans": {"n_scans": 2}}
    found = problems(data)
    assert "paper.default.scans.n_scans: must be >= 3, got 2" in found
    assert any(line.startswith("paper.default.methods[1]: must be one of") for line in found)


def test_a_papers_own_rule_reads_like_the_others():
    data = default_profile() | {"methods": ["eig", "chain"]}
    assert problems(data) == ["paper.default.methods: must include dqgpm (the claims use it), got ['eig', 'chain']"]


def test_unknown_profile_is_refused(tmp_path):
    (tmp_path / "params.yaml").write_text("profile: huge\n")
    with pytest.raises(ParamsError, match=r"profile: must be one of \('smoke', 'default', 'full'\), got 'huge'"):
        active_profile(tmp_path)


@pytest.mark.parametrize("value", [True, "2", 2.0])
def test_no_silent_coercion_a_bool_string_or_float_is_not_an_int(value):
    assert problems(default_profile() | {"seeds": value}) == [
        f"paper.default.seeds: input should be a valid integer, got {value!r}"]


def test_an_int_is_still_a_float_and_a_yaml_list_fills_a_fixed_length_tuple():
    params = validate(Example, default_profile() | {"p": 1}, "paper.default")
    assert params.p == 1.0 and params.start == (-1.0, 2.0)
    assert problems(default_profile() | {"start": ["-1", 2.0]}) == [
        "paper.default.start[0]: input should be a valid number, got '-1'"]


def write_params(root, text: str):
    (root / "stages" / "p").mkdir(parents=True)
    (root / "stages" / "p" / "params.yaml").write_text(text)
    return root


def test_a_profile_is_the_base_with_its_overrides_laid_over_key_by_key(tmp_path):
    write_params(tmp_path, "p:\n  base: {seed: 0, grid: {n: 3, lr: [1, 2]}, name: a}\n"
                           "  smoke: {grid: {n: 1}}\n  default: {}\n  full: {grid: {lr: [5]}, name: b}\n")
    assert profile_values(tmp_path, "p", "smoke") == {"seed": 0, "grid": {"n": 1, "lr": [1, 2]}, "name": "a"}
    assert profile_values(tmp_path, "p", "default") == {"seed": 0, "grid": {"n": 3, "lr": [1, 2]}, "name": "a"}
    assert profile_values(tmp_path, "p", "full") == {"seed": 0, "grid": {"n": 3, "lr": [5]}, "name": "b"}


@pytest.mark.parametrize(("text", "message"), [
    ("p:\n  smoke: {}\n  default: {}\n  full: {}\n", "p.base: required mapping is missing"),
    ("p:\n  base: {}\n  smoke: {}\n  full: {}\n", "p.default: required mapping is missing"),
    ("p:\n  base: {}\n  smoke: {}\n  default: [1]\n  full: {}\n", "p.default: required mapping is missing or not a mapping, got [1]"),
    ("p:\n  base: {}\n  smoke: {}\n  default: {}\n  full: {}\n  huge: {}\n", "p.huge: unknown section"),
])
def test_a_missing_or_unknown_section_is_named(tmp_path, text, message):
    write_params(tmp_path, text)
    with pytest.raises(ParamsError, match=re.escape(message)):
        profile_values(tmp_path, "p", "default")


def test_every_papers_profiles_share_their_common_values_through_the_base():
    """Written once: a value every profile repeats belongs in base."""
    for paper in papers(ROOT):
        sections = yaml.safe_load((ROOT / "stages" / paper / "params.yaml").read_text())[paper]
        for key in set(sections["smoke"]) & set(sections["default"]) & set(sections["full"]):
            values = [sections[profile][key] for profile in PROFILES]
            assert not all(value == values[0] and not isinstance(value, dict) for value in values), \
                f"{paper}: every profile sets {key} to {values[0]!r}; move it to {paper}.base"
