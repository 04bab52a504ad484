"""One federated run's settings (spec §3.6 defaults): the method, the local optimiser, the model, FedCDWA's switches
and FedProto's weight. The params file's `hyper` section (params.py) and the CLI's options both build it, so every
value is checked by the same field rules. No torch here: the CLI checks its options before importing it."""
from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field

from tasks.core.params import Params

MethodName = Literal["fedavg", "fedavg_ft", "fedproto", "local", "fedcdwa"]  # methods.METHODS has one of each
METHOD_NAMES = get_args(MethodName)
MAX_ROUNDS, MAX_EPOCHS = 1000, 100
Rounds = Annotated[int, Field(ge=1, le=MAX_ROUNDS)]
LocalEpochs = Annotated[int, Field(ge=1, le=MAX_EPOCHS)]
PersonalEpochs = Annotated[int, Field(ge=0, le=MAX_EPOCHS)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Count = Annotated[int, Field(ge=1)]
Fraction = Annotated[float, Field(gt=0, le=1)]


class FedConfig(Params):
    method: MethodName = "fedcdwa"
    rounds: Rounds = 30
    local_epochs: LocalEpochs = 2  # E
    personal_epochs: PersonalEpochs = 2  # E_p (FedCDWA's personal branch, FedAvg-FT's fine-tuning)
    lr: Positive = 0.05
    momentum: NonNegative = 0.9
    weight_decay: NonNegative = 1e-4
    batch: Count = 32
    hidden: Count = 128
    feature_dim: Count = 32
    participation: Fraction = 1.0  # the share of clients sampled each round (partial participation below 1)
    last_rounds: Count = 5  # accuracies are the mean over the last rounds (min(last_rounds, rounds)), not the final one
    # FedCDWA (spec §3)
    lam_gm: NonNegative = 0.1  # PVDA on the global branch: mean, std
    lam_gv: NonNegative = 0.1
    lam_pm: NonNegative = 0.1  # PVDA on the personal branch
    lam_pv: NonNegative = 0.1
    lam_kd: NonNegative = 0.1
    temperature: Positive = 2.0
    sub_prototypes: Count = 3  # J
    support: Count = 3  # J_bar; 1 = the HWA-Gauss ablation (S_c = {mu_c})
    barycenter_iterations: Count = 50
    server_steps: int = Field(default=10, ge=0)  # I_s; 0 turns server-side distillation off
    gate_server_step: bool = True  # keep a server step only if it does not lower the clients' validation accuracy
    server_lr: NonNegative = 0.01
    server_momentum: NonNegative = 0.9
    server_batch: Count = 32  # virtual features per class per step
    kappa: NonNegative = 1.0
    # FedProto (Tan et al. 2022)
    lam_proto: NonNegative = 1.0
