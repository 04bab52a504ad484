"""Instances and results on disk (npz), so stages hand data to each other through DVC outputs."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tasks.core.io import jsonable

from .graph import PoseGraph, Poses, SyncResult


@dataclass(frozen=True)
class Instance:
    """A measured pose graph with its ground truth and how it was made (family, sigma, seed...)."""

    graph: PoseGraph
    truth: Poses
    meta: dict


def save_instance(path: Path, instance: Instance, **extra: np.ndarray) -> None:
    arrays = {"n": np.int64(instance.graph.n), "edges": instance.graph.edges, "Z": instance.graph.Z,
              "R_true": instance.truth.R, "t_true": instance.truth.t, "meta": np.array(json.dumps(instance.meta))}
    if instance.graph.dq is not None:
        arrays["dq"] = instance.graph.dq
    np.savez_compressed(path, **arrays, **extra)


def load_instance(path: Path) -> Instance:
    with np.load(path) as data:
        graph = PoseGraph(int(data["n"]), data["edges"], data["Z"], data["dq"] if "dq" in data else None)
        return Instance(graph, Poses(data["R_true"], data["t_true"]), json.loads(str(data["meta"])))


def save_result(path: Path, result: SyncResult) -> None:
    np.savez_compressed(path, R=result.poses.R, t=result.poses.t, iterations=np.int64(result.iterations),
                        history=np.asarray(result.history, dtype=float), wall_time=np.float64(result.wall_time),
                        method=np.array(result.method), info=np.array(json.dumps(result.info, default=jsonable)),
                        converged=np.bool_(result.converged), message=np.array(result.message))


def load_result(path: Path) -> SyncResult:
    with np.load(path) as data:
        return SyncResult(Poses(data["R"], data["t"]), int(data["iterations"]), data["history"].tolist(),
                          float(data["wall_time"]), str(data["method"]), json.loads(str(data["info"])),
                          bool(data["converged"]) if "converged" in data else True,
                          str(data["message"]) if "message" in data else "")
