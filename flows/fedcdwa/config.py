"""One federated run's settings (spec §3.6 defaults): the method, its switches, the local optimiser, the model."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

METHODS = ("fedavg", "fedavg_ft", "fedproto", "local", "fedcdwa")


@dataclass(frozen=True)
class FedConfig:
    method: str = "fedcdwa"
    rounds: int = 30
    local_epochs: int = 2  # E
    personal_epochs: int = 2  # E_p (FedCDWA's personal branch, FedAvg-FT's fine-tuning)
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 1e-4
    batch: int = 32
    hidden: int = 128
    feature_dim: int = 32
    # FedCDWA (spec §3)
    lam_gm: float = 0.1  # PVDA on the global branch: mean, std
    lam_gv: float = 0.1
    lam_pm: float = 0.1  # PVDA on the personal branch
    lam_pv: float = 0.1
    lam_kd: float = 0.1
    temperature: float = 2.0
    sub_prototypes: int = 3  # J
    support: int = 3  # J_bar; 1 = the HWA-Gauss ablation (S_c = {mu_c})
    barycenter_iterations: int = 50
    server_steps: int = 10  # I_s; 0 turns server-side distillation off
    server_lr: float = 0.01
    server_momentum: float = 0.9
    server_batch: int = 32  # virtual features per class per step
    kappa: float = 1.0
    # FedProto (Tan et al. 2022)
    lam_proto: float = 1.0

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method: must be one of {METHODS}, got {self.method!r}")

    def with_(self, **changes) -> "FedConfig":
        return replace(self, **changes)

    def as_dict(self) -> dict:
        return asdict(self)
