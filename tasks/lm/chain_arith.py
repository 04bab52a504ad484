"""Noisy chain arithmetic: a multi-step reasoning task with an exact outcome checker (spec §6.1).

Prompt `BOS x0 op1 d1 ... opK dK SEP` (digits 0-9, ops + - *), reference completion `y1 ... yK A yK EOS` with
y_k = (y_{k-1} op_k d_k) mod 10, y_0 = x0. The intermediate digits are the process steps; the reward only
looks at the answer. A noisy teacher writes a wrong digit with probability p_err at each step and continues the
chain consistently from it, so its traces are internally consistent but can end wrong.

A family is the modulus and the range of K: the default mod 10 with short chains, and the spec's harder family
(mod 7, K in [8, 12]: longer chains, so more error points where a group's samples branch). In a mod-m family the
operands and values are 0..m-1; the prompt has the same form (a policy is trained on one family).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .vocab import TokenVocab

DIGITS = tuple(str(d) for d in range(10))
OPS = ("+", "-", "*")
ANSWER = "A"
VOCAB = TokenVocab(DIGITS + OPS + ("=", ANSWER))


def apply(op: str, y: int, d: int, modulus: int = 10) -> int:
    return (y + d) % modulus if op == "+" else (y - d) % modulus if op == "-" else (y * d) % modulus


@dataclass(frozen=True)
class ChainProblem:
    x0: int
    ops: tuple[str, ...]
    digits: tuple[int, ...]
    modulus: int = 10

    @property
    def k(self) -> int:
        return len(self.ops)

    def chain(self) -> list[int]:
        """y_1..y_K."""
        values, y = [], self.x0
        for op, d in zip(self.ops, self.digits):
            y = apply(op, y, d, self.modulus)
            values.append(y)
        return values

    @property
    def answer(self) -> int:
        return self.chain()[-1]

    def prompt_ids(self) -> list[int]:
        body = [str(self.x0)] + [t for op, d in zip(self.ops, self.digits) for t in (op, str(d))]
        return [VOCAB.bos] + VOCAB.encode(body) + [VOCAB.sep]

    def to_json(self) -> dict:
        return {"x0": self.x0, "ops": "".join(self.ops), "digits": list(self.digits), "modulus": self.modulus}

    @classmethod
    def from_json(cls, row: dict) -> ChainProblem:
        return cls(int(row["x0"]), tuple(row["ops"]), tuple(int(d) for d in row["digits"]), int(row.get("modulus", 10)))


def max_completion_length(k_max: int) -> int:
    """K digits, the answer marker, the answer, EOS."""
    return k_max + 3


def sample_problem(rng: np.random.Generator, k_min: int, k_max: int, modulus: int = 10) -> ChainProblem:
    if not 1 <= k_min <= k_max:
        raise ValueError(f"k_min, k_max: need 1 <= k_min <= k_max, got {k_min}, {k_max}")
    if not 2 <= modulus <= len(DIGITS):
        raise ValueError(f"modulus: need 2..{len(DIGITS)} (one digit token per value), got {modulus}")
    k = int(rng.integers(k_min, k_max + 1))
    return ChainProblem(int(rng.integers(modulus)), tuple(OPS[i] for i in rng.integers(3, size=k)),
                        tuple(int(d) for d in rng.integers(modulus, size=k)), modulus)


def distinct_problems(rng: np.random.Generator, n: int, k_min: int, k_max: int,
                      exclude: set[ChainProblem] = frozenset(), modulus: int = 10) -> list[ChainProblem]:
    """`n` distinct problems, none in `exclude` (rejection on exact duplicates)."""
    space = sum(modulus * (3 * modulus) ** k for k in range(k_min, k_max + 1))
    if n > (space - len(exclude)) // 2:
        raise ValueError(f"n: {n} distinct problems is too many for K in [{k_min}, {k_max}] ({space} exist)")
    chosen: dict[ChainProblem, None] = {}
    while len(chosen) < n:
        problem = sample_problem(rng, k_min, k_max, modulus)
        if problem not in exclude:
            chosen.setdefault(problem)
    return list(chosen)


def completion_ids(values: list[int]) -> list[int]:
    """`y1 ... yK A yK EOS` for the chain values y."""
    return VOCAB.encode([str(v) for v in values] + [ANSWER, str(values[-1])]) + [VOCAB.eos]


def reference_completion(problem: ChainProblem) -> list[int]:
    return completion_ids(problem.chain())


def teacher_completion(problem: ChainProblem, p_err: float, rng: np.random.Generator) -> tuple[list[int], bool]:
    """A noisy teacher's trace and whether it made an error: at each step, with probability p_err, a uniformly
    random wrong digit, the chain continuing from it."""
    values, y, noisy, m = [], problem.x0, False, problem.modulus
    for op, d in zip(problem.ops, problem.digits):
        y = apply(op, y, d, m)
        if rng.random() < p_err:
            y = int((y + rng.integers(1, m)) % m)  # uniform over the m - 1 wrong values
            noisy = True
        values.append(y)
    return completion_ids(values), noisy


def reward(problem: ChainProblem, completion: list[int], k_max: int) -> float:
    """1 iff the completion reads `digit+ A a EOS` within max_completion_length(k_max) tokens and a = y_K."""
    if not 4 <= len(completion) <= max_completion_length(k_max) or completion[-1] != VOCAB.eos:
        return 0.0
    *steps, marker, answer, _ = completion
    digit_ids = range(10)  # DIGITS are ids 0..9
    if marker != VOCAB.index[ANSWER] or answer not in digit_ids or not all(s in digit_ids for s in steps):
        return 0.0
    return float(answer == problem.answer)
