"""The typed params of sw_drso: one profile of stages/sw_drso/params.yaml."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.sets.corruptions import KINDS
from tasks.sets.primitive_clouds import CLASSES
from tasks.sets.weighted_encoders import POOLINGS

from .training import METHODS

TASKS = ("A", "B")


class TaskA(BaseParams):
    """Point clouds of the first `classes` trimesh primitives (tasks/sets/primitive_clouds.py)."""

    classes: int = Field(ge=2, le=len(CLASSES))
    train_per_class: int = Field(ge=1)
    test_per_class: int = Field(ge=1)
    n: int = Field(ge=4, le=4096)
    train_seed: int = Field(ge=0)
    test_seed: int = Field(ge=0)

    @model_validator(mode="after")
    def _seeds_differ(self):
        if self.train_seed == self.test_seed:
            raise ValueError("train_seed and test_seed must differ (train and test clouds from other generators)")
        return self


class TaskB(BaseParams):
    """scikit-learn digits as point sets (tasks/sets/digit_sets.py)."""

    n: int = Field(ge=4, le=256)
    split_seed: int = Field(ge=0)
    test_fraction: float = Field(gt=0, lt=1)


class Method(BaseParams):
    """The shared method settings (spec §3): every method reads the ones it uses."""

    beta: float = Field(ge=0, le=1)
    eps_max: float = Field(ge=0, lt=1)
    rho_max: float = Field(ge=0, lt=1)
    pool_fraction: float = Field(gt=0, le=1)
    ascent_steps: int = Field(ge=0, le=50)
    alpha: float = Field(gt=0)
    worst_of_k: int = Field(ge=1, le=64)
    jitter: float = Field(ge=0)
    sw_gamma: float = Field(ge=0)
    sw_projections: int = Field(ge=1)


class RunGroup(BaseParams):
    """Every method of `methods` with `encoder` on `task`, for seeds 0..seeds-1; `epochs` and `lr`, when given,
    replace the profile's for every method of the group (a task's own training budget)."""

    task: Literal["A", "B"]
    encoder: Literal[POOLINGS]
    methods: list[Literal[METHODS]] = Field(min_length=1)
    seeds: int = Field(ge=1)
    epochs: int | None = Field(default=None, ge=1)
    lr: float | None = Field(default=None, gt=0)


class CorruptionSpec(BaseParams):
    kind: Literal[KINDS]
    r: float = Field(default=0.0, ge=0, lt=1)


class Params(BaseParams):
    seed: int = Field(ge=0)
    task_a: TaskA
    task_b: TaskB | None = None
    epochs: int = Field(ge=1)
    batch: int = Field(ge=1)
    lr: float = Field(gt=0)
    hidden: int = Field(ge=1)
    method: Method
    runs: list[RunGroup] = Field(min_length=1)
    suite: list[CorruptionSpec] = Field(min_length=2)
    decide_claims: bool
    device: str = "cpu"

    def budget(self, group: RunGroup) -> tuple[int, float]:
        """(epochs, lr) every method of `group` trains with."""
        return group.epochs or self.epochs, group.lr or self.lr

    @model_validator(mode="after")
    def _consistent(self):
        if any(group.task == "B" for group in self.runs) and self.task_b is None:
            raise ValueError("runs: a run group on task B needs task_b")
        if self.suite[0].kind != "clean" or sum(c.kind == "clean" for c in self.suite) != 1:
            raise ValueError("suite: must start with the one clean entry")
        return self
