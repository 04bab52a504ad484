"""The typed params of fedcdwa: one profile of stages/fedcdwa/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams

from .config import FedConfig
from .variants import ABLATIONS

Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Method = Literal["fedavg", "fedavg_ft", "fedproto", "local", "fedcdwa"]
Ablation = Literal[tuple(ABLATIONS)]


class Hyper(BaseParams):
    """FedConfig's fields that a profile may set (defaults: spec §3.6)."""

    lr: Positive = FedConfig.lr
    momentum: NonNegative = FedConfig.momentum
    weight_decay: NonNegative = FedConfig.weight_decay
    batch: int = Field(default=FedConfig.batch, ge=1)
    lam_gm: NonNegative = FedConfig.lam_gm
    lam_gv: NonNegative = FedConfig.lam_gv
    lam_pm: NonNegative = FedConfig.lam_pm
    lam_pv: NonNegative = FedConfig.lam_pv
    lam_kd: NonNegative = FedConfig.lam_kd
    temperature: Positive = FedConfig.temperature
    sub_prototypes: int = Field(default=FedConfig.sub_prototypes, ge=1)
    support: int = Field(default=FedConfig.support, ge=1)
    server_steps: int = Field(default=FedConfig.server_steps, ge=0)
    server_lr: NonNegative = FedConfig.server_lr
    kappa: NonNegative = FedConfig.kappa
    lam_proto: NonNegative = FedConfig.lam_proto


class Params(BaseParams):
    seed: int = Field(ge=0)
    clients: int = Field(ge=1, le=1000)  # K
    alphas: list[Positive] = Field(min_length=1)  # Dirichlet concentration; smaller = more heterogeneous
    seeds: int = Field(ge=1)
    rounds: int = Field(ge=1)
    local_epochs: int = Field(ge=1)  # E
    personal_epochs: int = Field(ge=0)  # E_p
    methods: list[Method] = Field(min_length=1)
    ablations: list[Ablation] = []  # FedCDWA variants, run at ablation_alpha
    ablation_alpha: Positive = 0.1
    hyper: Hyper = Hyper()
    decide_claims: bool
    device: str = "cpu"

    @model_validator(mode="after")
    def _ablation_alpha(self):
        if self.ablations and self.ablation_alpha not in self.alphas:
            raise ValueError(f"ablation_alpha: must be one of alphas {self.alphas}, got {self.ablation_alpha}")
        return self

    def config(self, method: str, ablation: str | None = None) -> FedConfig:
        cfg = FedConfig(method=method, rounds=self.rounds, local_epochs=self.local_epochs,
                        personal_epochs=self.personal_epochs, **self.hyper.model_dump())
        return cfg.with_(**ABLATIONS[ablation]) if ablation else cfg
