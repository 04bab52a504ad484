"""The expert-trajectory knowledge base: every teacher run from the same initial population on each (episode,
training function), then one stitched trajectory per pair: in each segment of `interval` generations the
teacher with the lowest best-so-far at the segment's last generation wins, and its own distribution parameters
(mean, covariance) for the segment are copied unchanged ("best" selection mode)."""
from __future__ import annotations

import numpy as np

from tasks.blackbox.experts import EXPERTS
from tasks.blackbox.teachers import Trajectory
from tasks.core.seeding import derive_seed

from .functions import ShiftedFunction, shifted


def collect_episode(name: str, dim: int, popsize: int, generations: int, teachers: list[str], seed: int) -> dict:
    """One (episode, function): its bias, its initial population and every teacher's trajectory."""
    rng = np.random.default_rng(seed)
    function = shifted(name, dim, rng)
    population0 = rng.uniform(function.lower, function.upper, (popsize, dim))
    runs = {teacher: EXPERTS[teacher](function, population0, function.lower, function.upper, generations,
                                       derive_seed(seed, teacher))
            for teacher in teachers}
    return {"function": name, "bias": function.bias, "population0": population0,
            "trajectories": {teacher: vars(run) for teacher, run in runs.items()}}


def stitch(trajectories: dict[str, dict], interval: int) -> dict:
    """The stitched (means, covs) of one episode and the teacher picked per segment."""
    names = list(trajectories)
    generations = len(trajectories[names[0]]["means"])
    means, covs, picks = [], [], []
    for start in range(0, generations, interval):
        end = min(start + interval, generations) - 1
        winner = names[int(np.argmin([trajectories[n]["best_so_far"][end] for n in names]))]
        means.append(trajectories[winner]["means"][start:end + 1])
        covs.append(trajectories[winner]["covs"][start:end + 1])
        picks.append(winner)
    return {"means": np.concatenate(means), "covs": np.concatenate(covs), "picks": picks}


def training_function(episode: dict) -> ShiftedFunction:
    return ShiftedFunction(episode["function"], np.asarray(episode["bias"]))


def as_trajectory(record: dict) -> Trajectory:
    return Trajectory(**{key: record[key] for key in Trajectory.__dataclass_fields__})
