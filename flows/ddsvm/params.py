"""The typed params of ddsvm: one profile of stages/ddsvm/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams

Positive = Annotated[float, Field(gt=0)]
# the methods the claims compare (spec §6): their names in `methods` are fixed
CE, COSINE, DDSVM = "ce", "cosine", "ddsvm"


class MethodParams(BaseParams):
    """One trained method: its loss and, for "ddsvm", the push (spec §3.4 defaults)."""

    loss: Literal["ce", "cosine", "ddsvm"]
    lam: float = Field(default=1.0, ge=0)
    eta: Positive = 0.1
    option: Literal["A", "B", "C"] = "A"
    only_violators: bool = False
    refit_every: int = Field(default=1, ge=1)


class Sweep(BaseParams):
    """Every method of `methods` on `seeds` paired splits of k training images per class."""

    k: int = Field(ge=1, le=150)  # digits' smallest class has 174 images: some are left to test
    seeds: int = Field(ge=1)
    methods: list[str] = Field(min_length=1)


class Training(BaseParams):
    backbone: Literal["conv", "resnet"] = "conv"  # the spec's small CNN, or the small ResNet of the full profile
    epochs: int = Field(ge=1)
    lr: Positive
    weight_decay: float = Field(ge=0)
    svm_C: Positive
    feature_dim: int = Field(ge=2)
    width: int = Field(ge=1)  # channels of the first conv (the next have twice as many; a ResNet doubles per stage)
    cosine_scale: Positive
    augment_shift: int = Field(ge=0)
    upsample: int = Field(ge=1)  # images enlarged by this factor (bilinear) before the backbone


class Params(BaseParams):
    seed: int = Field(ge=0)
    gate_k: int  # the k whose sweep decides the claims
    trend_ks: list[int] = []  # the k's whose gains C5 fits a trend to (none: C5 is not run)
    sweeps: list[Sweep] = Field(min_length=1)
    methods: dict[str, MethodParams]
    training: Training
    decide_claims: bool
    device: str = "auto"

    @model_validator(mode="after")
    def _consistent(self):
        for i, sweep in enumerate(self.sweeps):
            unknown = [m for m in sweep.methods if m not in self.methods]
            if unknown:
                raise ValueError(f"sweeps[{i}].methods: {unknown} not among methods {sorted(self.methods)}")
        gate = [s for s in self.sweeps if s.k == self.gate_k]
        if len(gate) != 1 or not {CE, DDSVM} <= set(gate[0].methods):
            raise ValueError(f"gate_k: needs exactly one sweep with k = {self.gate_k} that runs {CE!r} and {DDSVM!r}")
        both = {s.k for s in self.sweeps if {CE, DDSVM} <= set(s.methods)}
        missing = [k for k in self.trend_ks if k not in both]
        if missing:
            raise ValueError(f"trend_ks: {missing} need a sweep that runs {CE!r} and {DDSVM!r}")
        if len({s.k for s in self.sweeps}) != len(self.sweeps):
            raise ValueError("sweeps: one sweep per k")
        for name, fixed in ((CE, "ce"), (COSINE, "cosine"), (DDSVM, "ddsvm")):
            if name in self.methods and self.methods[name].loss != fixed:
                raise ValueError(f"methods.{name}.loss: must be {fixed!r} (the claims compare it by name)")
        return self
