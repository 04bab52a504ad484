"""MetaDistill costs, one run: (1) function evaluations per second of every optimiser on BBOB f1 (IOH), d = 10,
N = 32, 2000 evaluations (the default profile's evaluation), as ratios to the teacher CMA-ES; (2) the student's
cost per generation against the dimension (10, 30, 100); (3) the distillation's cost against the knowledge base's
size (1, 2, 4 episodes x 5 functions, one pass over it: building it with two teachers, then distilling). One torch
thread; medians over repeats."""
from __future__ import annotations

from statistics import median
from time import perf_counter

import numpy as np
import torch

from flows.metadistill.distill import distill
from flows.metadistill.functions import TRAINING_FUNCTIONS
from flows.metadistill.knowledge import collect_episode, stitch
from flows.metadistill.les import LES
from flows.metadistill.rollout import populations_in_budget, run_cmaes, run_student
from tasks.blackbox.bbob import BBOBProblem
from tasks.blackbox.teachers import TEACHERS
from tasks.core.device import single_torch_thread

from .common import write_result

REPEATS = 3


def timed(work) -> float:
    times = []
    for _ in range(REPEATS):
        start = perf_counter()
        work()
        times.append(perf_counter() - start)
    return median(times)


def evaluations_per_second(dim=10, popsize=32, budget=2000) -> dict:
    problem = BBOBProblem(1, 1, dim)
    populations = populations_in_budget(popsize, budget)
    evaluations = populations * popsize
    torch.manual_seed(0)
    student = LES().double()
    x0 = np.random.default_rng(0).uniform(-5, 5, (popsize, dim))
    runs = {
        "les": lambda: run_student(student, problem, problem.lower, problem.upper, popsize, populations, 0),
        "les_ssft_j1": lambda: run_student(student, problem, problem.lower, problem.upper, popsize, populations, 0,
                                           ssft_j=1),
        "cmaes": lambda: run_cmaes(problem, problem.lower, problem.upper, popsize, populations, 0),
        **{f"teacher_{name}": (lambda name=name: TEACHERS[name](problem, x0, problem.lower, problem.upper,
                                                                 populations - 1, 0))
           for name in ("de", "pso", "jade")},
    }
    seconds = {name: timed(run) for name, run in runs.items()}
    rate = {name: evaluations / s for name, s in seconds.items()}
    return {"setting": {"function": "BBOB f1 i1", "dim": dim, "popsize": popsize, "evaluations": evaluations},
            "seconds": seconds, "evaluations_per_second": rate,
            "ratio_to_cmaes": {name: r / rate["cmaes"] for name, r in rate.items()}}


def student_vs_dimension(dims=(10, 30, 100), popsize=32, populations=20) -> dict:
    torch.manual_seed(0)
    student = LES().double()
    per_generation = {}
    for dim in dims:
        problem = BBOBProblem(1, 1, dim)
        seconds = timed(lambda: run_student(student, problem, problem.lower, problem.upper, popsize, populations, 0))
        per_generation[str(dim)] = seconds / populations
    return {"popsize": popsize, "seconds_per_generation": per_generation}


def distillation_vs_knowledge(sizes=(1, 2, 4), dim=5, popsize=16, generations=20) -> dict:
    rows = {}
    for episodes in sizes:
        start = perf_counter()
        knowledge = []
        for e in range(episodes):
            entries = []
            for k, name in enumerate(TRAINING_FUNCTIONS):
                episode = collect_episode(name, dim, popsize, generations, ["cmaes", "de"], seed=100 * e + k)
                entries.append({"function": name, "bias": episode["bias"]} | stitch(episode["trajectories"], 10))
            knowledge.append(entries)
        build = perf_counter() - start
        torch.manual_seed(0)
        result = distill(LES().double(), knowledge, popsize, 10, episodes, 5e-4, 1e-3, 1.0, 10, 0)
        rows[str(episodes * len(TRAINING_FUNCTIONS))] = {"build_s": build, "distill_s": result["wall_time_s"],
                                                         "distill_s_per_trajectory": result["wall_time_s"]
                                                         / (episodes * len(TRAINING_FUNCTIONS))}
    return {"dim": dim, "popsize": popsize, "generations": generations, "by_trajectories": rows}


def main() -> None:
    single_torch_thread()
    result = {"evaluations": evaluations_per_second(), "student_vs_dimension": student_vs_dimension(),
              "distillation_vs_knowledge": distillation_vs_knowledge()}
    print(write_result("metadistill", result))


if __name__ == "__main__":
    main()
