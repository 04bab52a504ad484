"""Reference optima, labelled QAOA^2 runs, and the critic's samples (spec §3.4, §6)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .features import to_tensors
from .graph import performance_ratio
from .instances import read_biqmac


def load_reference(path: Path) -> dict:
    """'split/name' -> {optimum, status ('proved', or 'lower_bound': the best cut known), bound, gap, sum_negative, n, ...} as
    written by the generate stage."""
    return json.loads(Path(path).read_text())


def updated_optimum(entry: dict, cuts: list[float]) -> float:
    """The reference OPT: SCIP's where it proved optimality, else the best of SCIP's incumbent, the local
    search and every cut any method found in this run, so that every policy is judged against the same OPT."""
    return entry["optimum"] if entry["status"] == "proved" else max([entry["optimum"], *cuts])


def label_runs(runs: list[dict], reference: dict, split: str) -> list[dict]:
    """Each run with its performance ratio rho against the (updated) reference optimum."""
    labelled = []
    for graph in sorted({r["graph"] for r in runs}):
        entry = reference[f"{split}/{graph}"]
        mine = [r for r in runs if r["graph"] == graph]
        optimum = updated_optimum(entry, [r["cut"] for r in mine])
        labelled += [r | {"split": split, "optimum": optimum,
                          "rho": performance_ratio(r["cut"], optimum, entry["sum_negative"])} for r in mine]
    return labelled


def critic_sample(tensors, run: dict) -> tuple:
    """(GraphTensors, level-0 parts, level-0 (gamma, beta) per part, final rho): the critic sees the
    top-level decision and learns the whole run's outcome (spec §3.4)."""
    parts = [np.asarray(p, dtype=int) for p in run["parts"]]
    params = [(np.atleast_1d(g), np.atleast_1d(b)) for g, b in run["params"]]
    return tensors, parts, params, run["rho"]


def load_samples(path: Path, graphs: Path) -> list[tuple]:
    """Critic samples from a labelled-runs file, duplicates of (graph, partition) removed (spec §3.4)."""
    runs = json.loads(Path(path).read_text())
    tensors, seen, samples = {}, set(), []
    for run in runs:
        key = (run["split"], run["graph"], tuple(tuple(sorted(p)) for p in sorted(run["parts"], key=min)))
        if key in seen:
            continue
        seen.add(key)
        if (run["split"], run["graph"]) not in tensors:
            tensors[run["split"], run["graph"]] = to_tensors(read_biqmac(graphs / run["split"] / f"{run['graph']}.txt"))
        samples.append(critic_sample(tensors[run["split"], run["graph"]], run))
    return samples
