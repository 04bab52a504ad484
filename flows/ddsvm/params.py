"""The typed params of ddsvm: one profile of stages/ddsvm/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams

Positive = Annotated[float, Field(gt=0)]
# the methods the claims compare (spec §6): their names in `methods` are fixed
CE, COSINE, DDSVM = "ce", "cosine", "ddsvm"
# the data sources: scikit-learn's digits (spec §6) and the generated depth images of trimesh primitives (§7 (b))
DIGITS, SHAPES = "digits", "shapes"


class MethodParams(BaseParams):
    """One trained method: its loss and, for "ddsvm", the push (spec §3.4 defaults)."""

    loss: Literal["ce", "cosine", "ddsvm"]
    lam: float = Field(default=1.0, ge=0)
    eta: Positive = 0.1
    option: Literal["A", "B", "C"] = "A"
    only_violators: bool = False
    refit_every: int = Field(default=1, ge=1)


class Sweep(BaseParams):
    """Every method of `methods` on `seeds` paired splits of k training images per class of `data`."""

    data: Literal["digits", "shapes"] = DIGITS
    k: int = Field(ge=1, le=150)  # digits' smallest class has 174 images: some are left to test
    seeds: int = Field(ge=1)
    methods: list[str] = Field(min_length=1)
    epochs: int | None = Field(default=None, ge=1)  # this sweep's training epochs, if not training.epochs

    def tag(self) -> str:
        """k10 for the digits (their names from before the generated set), shapes_k20 for the depth images."""
        return f"k{self.k}" if self.data == DIGITS else f"{self.data}_k{self.k}"


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
    upsample: int = Field(ge=1)  # the digits enlarged by this factor (bilinear); the depth images are 32x32 as made


class Params(BaseParams):
    seed: int = Field(ge=0)
    gate_k: int  # the k whose digits sweep decides C1-C4
    trend_ks: list[int] = []  # the k's of digits sweeps whose gains C5 fits a trend to (none: C5 is not run)
    shapes_per_class: int = Field(default=220, ge=2, le=2000)  # depth images made per class: k train, the rest test
    shapes_k: int | None = None  # the k whose sweep of the depth images decides C6 (none: C6 is not run)
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
        if len({(s.data, s.k) for s in self.sweeps}) != len(self.sweeps):
            raise ValueError("sweeps: one sweep per data source and k")
        self._needs_comparison("gate_k", DIGITS, self.gate_k)
        if self.shapes_k is not None:
            self._needs_comparison("shapes_k", SHAPES, self.shapes_k)
        both = {s.k for s in self.sweeps if s.data == DIGITS and {CE, DDSVM} <= set(s.methods)}
        missing = [k for k in self.trend_ks if k not in both]
        if missing:
            raise ValueError(f"trend_ks: {missing} need a digits sweep that runs {CE!r} and {DDSVM!r}")
        too_large = [s.k for s in self.sweeps if s.data == SHAPES and s.k >= self.shapes_per_class]
        if too_large:
            raise ValueError(f"sweeps: k = {too_large} on shapes leaves no test image of shapes_per_class = "
                             f"{self.shapes_per_class}")
        for name, fixed in ((CE, "ce"), (COSINE, "cosine"), (DDSVM, "ddsvm")):
            if name in self.methods and self.methods[name].loss != fixed:
                raise ValueError(f"methods.{name}.loss: must be {fixed!r} (the claims compare it by name)")
        return self

    def _needs_comparison(self, field: str, data: str, k: int) -> None:
        """A claim's k needs exactly its sweep of `data` that runs both CE and DDSVM."""
        if not any(s.data == data and s.k == k and {CE, DDSVM} <= set(s.methods) for s in self.sweeps):
            raise ValueError(f"{field}: needs a {data} sweep with k = {k} that runs {CE!r} and {DDSVM!r}")
