"""The shared check of a command's option values: a value within its rule passes through unchanged; any other is
refused with one line naming the option, the rule and the value got."""
from __future__ import annotations

import math

import pytest

from tasks.core.inputs import InputError, check_choice, check_number, check_range


@pytest.mark.parametrize("check, value", [
    (lambda v: check_range("--steps", v, low=1, high=100_000), 1),
    (lambda v: check_range("--steps", v, low=1, high=100_000), 100_000),
    (lambda v: check_range("--seed", v, low=0), 2**40),
    (lambda v: check_number("--lr", v, above=0), 1e-300),
    (lambda v: check_number("--lam", v, at_least=0), 0.0),
    (lambda v: check_number("--noise", v, at_least=0, below=0.5), 0.0),
    (lambda v: check_number("--step", v, above=0, at_most=0.5), 0.5),
    (lambda v: check_number("--lower", v), -1e300),
    (lambda v: check_choice("--method", v, ("adam", "sgd")), "sgd"),
    (lambda v: check_choice("--student", v, {"md": "les_md.pt", "cmaes": None}), "cmaes"),
])
def test_a_value_within_its_rule_passes_unchanged(check, value) -> None:
    assert check(value) == value


@pytest.mark.parametrize("check, message", [
    (lambda: check_range("--steps", 0, low=1, high=100_000), "--steps: must be in 1..100,000, got 0"),
    (lambda: check_range("--budget", 10**9, low=1, high=10**7, note="comparisons"),
     "--budget: must be in 1..10,000,000 (comparisons), got 1,000,000,000"),
    (lambda: check_range("--seed", -1, low=0), "--seed: must be >= 0, got -1"),
    (lambda: check_number("--lr", 0.0, above=0), "--lr: must be a finite number > 0, got 0.0"),
    (lambda: check_number("--lr", math.nan, above=0), "--lr: must be a finite number > 0, got nan"),
    (lambda: check_number("--lam", -1.0, at_least=0), "--lam: must be a finite number >= 0, got -1.0"),
    (lambda: check_number("--upper", math.inf), "--upper: must be a finite number, got inf"),
    (lambda: check_number("--tol", 1.0, above=0, below=1), "--tol: must be in (0, 1), got 1.0"),
    (lambda: check_number("--noise", 0.5, at_least=0, below=0.5, note="a flip probability"),
     "--noise: must be in [0, 0.5) (a flip probability), got 0.5"),
    (lambda: check_number("--step", math.nan, above=0, at_most=0.5), "--step: must be in (0, 0.5], got nan"),
    (lambda: check_choice("--method", "dora", ("adam", "sgd")), "--method: must be one of adam, sgd, got 'dora'"),
])
def test_a_value_outside_its_rule_is_refused_naming_option_rule_and_value(check, message) -> None:
    with pytest.raises(InputError) as refused:
        check()
    assert str(refused.value) == message
