"""The typed params of unidrag: one profile of stages/unidrag/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.cfd.lbm_setup import LBMSetup
from tasks.cfd.vehicle_dataset import Placement
from tasks.core.params import LIST_AS_TUPLE, Params as BaseParams
from tasks.core.seeding import derive_seed

MIN_TAU = 0.53  # BGK stability on the CPU grids (spec §3.1)
C1_KINDS = ("unidrag", "transolver")


class Split(BaseParams):
    train: int = Field(ge=1)
    val: int = Field(ge=0)
    test: int = Field(ge=1)


class Geometry(BaseParams):
    per_type: int = Field(ge=1)
    split: Split
    contour_points: int = Field(ge=16)
    stl_examples: int = Field(ge=0)

    @model_validator(mode="after")
    def split_covers_every_shape(self):
        total = self.split.train + self.split.val + self.split.test
        if total != self.per_type:
            raise ValueError(f"split: train + val + test must equal per_type = {self.per_type}, got {total}")
        return self


class Solver(BaseParams):
    length_cells: int = Field(ge=4)
    grid: Annotated[tuple[int, int], LIST_AS_TUPLE]
    front_lengths: float = Field(gt=0)
    u_lat: float = Field(gt=0, lt=0.3)
    reynolds: float = Field(gt=0)
    steps: int = Field(ge=2)
    average_steps: int = Field(ge=1)
    bounce_back: Literal["halfway", "bouzidi"]
    batch_size: int = Field(ge=1)
    profile_bins: int = Field(ge=1)
    engine: Literal["auto", "numba", "torch"] = "auto"

    @property
    def tau(self) -> float:
        return 3 * self.u_lat * self.length_cells / self.reynolds + 0.5

    @model_validator(mode="after")
    def stable_and_inside_the_grid(self):
        if self.tau < MIN_TAU:
            raise ValueError(f"reynolds: tau = 3 u_lat L / Re + 0.5 = {self.tau:.4f} < {MIN_TAU} (unstable BGK)")
        if 2 * self.average_steps > self.steps:
            raise ValueError(f"average_steps: two windows (convergence drift) must fit in steps = {self.steps}, "
                             f"got {self.average_steps}")
        nx, nz = self.grid
        if (self.front_lengths + 2.5) * self.length_cells > nx or self.length_cells + 1 > nz:
            raise ValueError(f"grid: {self.grid} cannot hold the body (L = {self.length_cells}) and the volume "
                             f"box x in [-0.5 L, 2.5 L] behind a nose at {self.front_lengths} L")
        return self

    def setup(self, device: str) -> LBMSetup:
        return LBMSetup(lattice="D2Q9", grid=self.grid, tau=self.tau, u_lat=self.u_lat, steps=self.steps,
                        average_steps=self.average_steps, ramp_steps=round(self.length_cells / self.u_lat),
                        bounce_back=self.bounce_back, ground="moving", top="free_stream",
                        profile_bins=self.profile_bins, device=device, engine=self.engine)

    def placement(self) -> Placement:
        return Placement(self.length_cells, self.front_lengths * self.length_cells)


class Sampling(BaseParams):
    surface_points: int = Field(ge=8)
    volume_points: int = Field(ge=8)


class Validation(BaseParams):
    diameter_cells: int = Field(ge=4)
    steps: int = Field(ge=100)


class Checks(BaseParams):
    cd_tolerance: float = Field(gt=0)
    recirculation_tolerance: float = Field(gt=0)
    max_drift: float = Field(gt=0)
    min_r2: float = Field(le=1)
    min_reduction: float
    min_success: float = Field(ge=0, le=1)
    decide_claims: bool


class Surrogate(BaseParams):
    """The point-cloud surrogates: UniDrag and Transolver (claim C1) train with `seeds` seeds, the
    other `kinds` and the `ablations` with `baseline_seeds` (same seeds and step budget for every
    kind); `steps` is the most steps, with early stopping on validation R^2_Cd every `eval_every`
    steps after `patience` evaluations without a new best of the median of the last `smooth_window`
    evaluations (patience 0: train all steps; the best evaluation's weights kept); `gbt` adds the
    generator-parameter trees; `bootstrap` resamples of the test set give the R^2 intervals."""

    d: int = Field(ge=1)
    blocks: int = Field(ge=1)
    heads: int = Field(ge=1)
    slices: int = Field(ge=1)
    experts: int = Field(ge=1)
    top_k: int = Field(ge=1)
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    pcgrad_scope: Literal["trunk", "last_block"]
    pcgrad_every: int = Field(ge=1)
    eval_every: int = Field(ge=0)
    patience: int = Field(ge=0)
    smooth_window: int = Field(ge=1)
    seeds: int = Field(ge=1)
    baseline_seeds: int = Field(ge=1)
    kinds: list[Literal["unidrag", "transolver", "pointnet"]]
    ablations: list[Literal["unidrag_no_mpl", "unidrag_no_ger"]]
    gbt: bool
    bootstrap: int = Field(ge=100)

    @model_validator(mode="after")
    def claim_c1_needs_unidrag_and_transolver(self):
        if not {"unidrag", "transolver"} <= set(self.kinds):
            raise ValueError(f"kinds: must include unidrag and transolver (claim C1), got {self.kinds}")
        return self

    def runs(self, base_seed: int) -> list[tuple[str, int, int]]:
        """(kind, seed number, training seed) of every model to train."""
        seed = lambda k: derive_seed(base_seed, "surrogate", k)
        count = lambda kind: self.seeds if kind in C1_KINDS else self.baseline_seeds
        return [(kind, k, seed(k)) for kind in [*self.kinds, *self.ablations] for k in range(count(kind))]


class Optimisation(BaseParams):
    """shapes: test shapes optimised, taken round-robin over body types; steps: T_opt; transformations:
    K (EoT; random search gets steps x K surrogate calls); delta_max in units of L."""

    shapes: int = Field(ge=1)
    steps: int = Field(ge=1)
    transformations: int = Field(ge=1)
    delta_max: float = Field(gt=0, le=0.2)
    methods: list[Literal["eot", "no_eot", "random"]]
    penalty: float = Field(ge=0)
    volume_tolerance: float = Field(gt=0)

    @model_validator(mode="after")
    def claims_c2_c3_need_eot_and_no_eot(self):
        if not {"eot", "no_eot"} <= set(self.methods):
            raise ValueError(f"methods: must include eot and no_eot (claims C2, C3), got {self.methods}")
        return self


class Params(BaseParams):
    seed: int = Field(ge=0)
    geometry: Geometry
    solver: Solver
    sampling: Sampling
    validation: Validation
    checks: Checks
    surrogate: Surrogate
    optimisation: Optimisation
    device: str = "auto"
