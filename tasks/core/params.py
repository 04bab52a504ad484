"""Validate a paper's params into typed objects before any work starts.

Each paper declares a pydantic model (extra keys forbidden). A bad key, type or value raises
ParamsError whose lines read like `<paper>.default.noise_levels[2]: must be >= 0, got -0.1`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from tasks.core.profiles import PROFILES

Model = TypeVar("Model", bound=BaseModel)


class Params(BaseModel):
    """Base for every paper's params: unknown keys are errors, values are immutable, and types are
    strict: `seeds: true` or `seeds: "2"` is refused, not read as 1 or 2 (an int is still a float)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _list_as_tuple(value):
    return tuple(value) if isinstance(value, list) else value


# YAML has lists, not tuples: a fixed-length field reads a list, its items still strictly typed.
LIST_AS_TUPLE = BeforeValidator(_list_as_tuple)


class ParamsError(ValueError):
    """Invalid params; `problems` lists one 'key.path: rule, got value' line per fault."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid params:\n  " + "\n  ".join(problems))


def key_path(prefix: str, loc: tuple) -> str:
    path = prefix
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


_RULES = {
    "greater_than_equal": "must be >= {ge}",
    "greater_than": "must be > {gt}",
    "less_than_equal": "must be <= {le}",
    "less_than": "must be < {lt}",
    "too_short": "must have at least {min_length} item(s)",
    "too_long": "must have at most {max_length} item(s)",
    "literal_error": "must be one of {expected}",
    "extra_forbidden": "unknown key",
    "missing": "required key is missing",
}


def _rule(error: dict) -> str:
    template = _RULES.get(error["type"])
    if error["type"] == "value_error":  # a model's own validator: its message is the rule
        return str(error["ctx"]["error"])
    if template is None:
        return error["msg"][0].lower() + error["msg"][1:]
    context = {k: f"{v:g}" if isinstance(v, float) else v for k, v in error.get("ctx", {}).items()}
    return template.format(**context)


def validate(model: type[Model], data: Any, prefix: str) -> Model:
    """Build `model` from `data` or raise ParamsError naming each bad key path."""
    if not isinstance(data, dict):
        raise ParamsError([f"{prefix}: must be a mapping, got {data!r}"])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            line = f"{key_path(prefix, error['loc'])}: {_rule(error)}"
            if error["type"] != "missing":
                line += f", got {error['input']!r}"
            problems.append(line)
        raise ParamsError(problems) from None


def read_yaml(path: Path) -> dict:
    with open(path) as handle:
        data = yaml.safe_load(handle) or {}
    if not isinstance(data, dict):
        raise ParamsError([f"{path}: must hold a mapping at the top level"])
    return data


def active_profile(root: Path) -> str:
    """The global `profile` key of the root params.yaml."""
    profile = read_yaml(root / "params.yaml").get("profile")
    if profile not in PROFILES:
        raise ParamsError([f"profile: must be one of {PROFILES}, got {profile!r}"])
    return profile


def merged(base: dict, override: dict) -> dict:
    """`base` with `override` laid over it: mappings merge key by key, any other value (a list included) replaces."""
    result = dict(base)
    for key, value in override.items():
        result[key] = merged(result[key], value) if isinstance(value, dict) and isinstance(result.get(key), dict) else value
    return result


def profile_values(root: Path, paper: str, profile: str) -> dict:
    """The raw values of `<paper>.base` overlaid with `<paper>.<profile>` from stages/<paper>/params.yaml."""
    data = read_yaml(root / "stages" / paper / "params.yaml")
    sections = data.get(paper)
    if not isinstance(sections, dict):
        raise ParamsError([f"{paper}: required key is missing in stages/{paper}/params.yaml"])
    for key in ("base", profile):
        if not isinstance(sections.get(key), dict):
            raise ParamsError([f"{paper}.{key}: required mapping is missing or not a mapping, got {sections.get(key)!r} "
                               f"(sections given: {sorted(sections)})"])
    unknown = sorted(set(sections) - {"base", *PROFILES})
    if unknown:
        raise ParamsError([f"{paper}.{unknown[0]}: unknown section (sections: base, {', '.join(PROFILES)})"])
    return merged(sections["base"], sections[profile])


def load_paper_params(root: Path, paper: str, profile: str, model: type[Model]) -> Model:
    """Validate the `profile` values of stages/<paper>/params.yaml (its base, overridden) into `model`."""
    return validate(model, profile_values(root, paper, profile), f"{paper}.{profile}")
