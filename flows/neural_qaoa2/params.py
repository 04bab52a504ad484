"""The typed params of neural_qaoa2 (stages/neural_qaoa2/params.yaml, one profile validated at a time)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from tasks.core.params import Params as BaseParams


class GraphSet(BaseParams):
    """families x sizes x count graphs (sizes are n, or L for the torus family t2g)."""

    families: list[Literal["g05", "pm1s", "w05", "pw05", "bqp", "t2g"]] = Field(min_length=1)
    sizes: list[int] = Field(min_length=1)
    count: int = Field(ge=1)


class Qaoa(BaseParams):
    n_max: int = Field(ge=2, le=16)
    steps: int = Field(ge=0)
    lr: float = Field(gt=0)
    shots: int = Field(ge=1)


class CriticParams(BaseParams):
    width: int = Field(ge=2)
    layers: int = Field(ge=1)
    epochs: int = Field(ge=1)


class GeneratorParams(BaseParams):
    width: int = Field(ge=2)
    layers: int = Field(ge=1)
    epochs: int = Field(ge=1)
    batch: int = Field(ge=1)
    lr: float = Field(gt=0)
    tta_steps: int = Field(ge=0)


class Params(BaseParams):
    seed: int = Field(ge=0)
    train: GraphSet
    test_id: GraphSet
    test_ood: list[GraphSet]
    qaoa: Qaoa
    runs_per_train_graph: int = Field(ge=1)
    level0_mix: dict[Literal["random", "modularity", "boundary", "kl", "kl_perturbed", "boundary_perturbed"], float]
    critic: CriticParams
    generator: GeneratorParams
    runs_per_test_graph: int = Field(ge=1)
    heldout_samples_per_graph: int = Field(ge=1)
    scip_max_edges: int = Field(ge=0)
    scip_node_limit: int = Field(ge=1)
    scip_time_limit: float = Field(gt=0)
    local_search_restarts: int = Field(ge=1)
    min_gain: float
    min_win_fraction: float = Field(ge=0, le=1)
    min_correlation: float = Field(ge=-1, le=1)
    decide_claims: bool
    device: str = "auto"
