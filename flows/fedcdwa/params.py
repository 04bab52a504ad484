"""The typed params of fedcdwa: one profile of stages/fedcdwa/params.yaml."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams

from .config import FedConfig, LocalEpochs, MethodName, PersonalEpochs, Positive, Rounds
from .variants import ABLATIONS

Ablation = Literal[tuple(ABLATIONS)]
PER_RUN = ("method", "rounds", "local_epochs", "personal_epochs")  # FedConfig's fields the profile sets per run


class Params(BaseParams):
    seed: int = Field(ge=0)
    clients: int = Field(ge=1, le=1000)  # K
    alphas: list[Positive] = Field(min_length=1)  # Dirichlet concentration; smaller = more heterogeneous
    seeds: int = Field(ge=1)
    rounds: Rounds
    local_epochs: LocalEpochs  # E
    personal_epochs: PersonalEpochs  # E_p
    methods: list[MethodName] = Field(min_length=1)
    ablations: list[Ablation] = []  # FedCDWA variants, run at ablation_alpha
    ablation_alpha: Positive = 0.1
    hyper: FedConfig = FedConfig()  # every run's other settings; omitted keys take the spec's §3.6 defaults
    decide_claims: bool
    device: str = "cpu"

    @model_validator(mode="after")
    def _ablation_alpha(self):
        if self.ablations and self.ablation_alpha not in self.alphas:
            raise ValueError(f"ablation_alpha: must be one of alphas {self.alphas}, got {self.ablation_alpha}")
        return self

    @model_validator(mode="after")
    def _hyper_leaves_per_run_fields(self):
        for key in PER_RUN:
            if key in self.hyper.model_fields_set:
                raise ValueError(f"hyper.{key}: set per run by the profile's own keys (methods, rounds, local_epochs, "
                                 f"personal_epochs), not in hyper")
        return self

    def config(self, method: str, ablation: str | None = None) -> FedConfig:
        per_run = {"method": method, "rounds": self.rounds, "local_epochs": self.local_epochs,
                   "personal_epochs": self.personal_epochs}
        return FedConfig(**(self.hyper.model_dump() | per_run | (ABLATIONS[ablation] if ablation else {})))
