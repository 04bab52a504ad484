"""The typed params of s_adam: one profile of stages/s_adam/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.core.params import LIST_AS_TUPLE, Params as BaseParams

REQUIRED_OPTIMIZERS = ("adamw", "prox_sgd", "sadam")
CONTROL = "adamw_damped"  # the optimizer name of the lr x damping control (controls.py) in runs and metrics


class AdamWOptions(BaseParams):
    kind: Literal["adamw"]
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-2, ge=0)


class ProxSGDOptions(BaseParams):
    kind: Literal["prox_sgd"]
    lr: float = Field(0.01, gt=0)
    momentum: float = Field(0.9, ge=0, lt=1)
    l1: float = Field(1e-4, ge=0)


class SAdamOptions(BaseParams):
    """Defaults: the paper's experiment settings (spec §3.2); strength is lambda."""

    kind: Literal["sadam"]
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-2, ge=0)
    k: int = Field(8, ge=1)
    sigma: float = Field(0.01, gt=0)
    strength: float = Field(2.0, ge=0)
    eps_lgi: float = Field(1e-6, gt=0)
    rho_cap: float = Field(10.0, ge=0)
    probe_norm: Literal["per_tensor", "global"] = "per_tensor"


OptimizerOptions = Annotated[AdamWOptions | ProxSGDOptions | SAdamOptions, Field(discriminator="kind")]


class QatTask(BaseParams):
    variants: list[Literal["4bit", "cifar100_2bit"]] = Field(min_length=1)
    epochs: int = Field(ge=1)
    batch: int = Field(ge=1)


class NoisyTask(BaseParams):
    label_noise: float = Field(ge=0, le=1)
    epochs: int = Field(ge=1)
    batch: int = Field(ge=1)


class RosenbrockTask(BaseParams):
    steps: int = Field(ge=1)
    start: Annotated[tuple[float, float], LIST_AS_TUPLE]
    optimizers: dict[str, OptimizerOptions]


class Params(BaseParams):
    seeds: list[Annotated[int, Field(ge=0)]] = Field(min_length=1)
    test_fraction: float = Field(gt=0, lt=1)
    hidden: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)
    qat: QatTask
    noisy: NoisyTask
    rosenbrock: RosenbrockTask
    optimizers: dict[str, OptimizerOptions]
    volatility_epochs: int = Field(ge=2)
    chattering_ratio: float = Field(gt=0)
    decide_claims: bool
    device: str = "auto"

    @model_validator(mode="after")
    def claims_have_their_runs(self):
        for where, names, needed in (("optimizers", self.optimizers, REQUIRED_OPTIMIZERS),
                                     ("rosenbrock.optimizers", self.rosenbrock.optimizers, ("adamw", "sadam"))):
            for name in needed:
                if name not in names:
                    raise ValueError(f"{where}: must name the claims' optimizer {name!r}, got {sorted(names)}")
        for where, names in (("optimizers", self.optimizers), ("rosenbrock.optimizers", self.rosenbrock.optimizers)):
            if names["adamw"].kind != "adamw" or names["sadam"].kind != "sadam":
                raise ValueError(f"{where}: 'adamw' must be of kind adamw and 'sadam' of kind sadam")
        if CONTROL in self.optimizers:
            raise ValueError(f"optimizers: {CONTROL!r} names the lr x damping control, choose another name")
        if "4bit" not in self.qat.variants:
            raise ValueError(f"qat.variants: must include '4bit' (claim C1), got {self.qat.variants}")
        return self
