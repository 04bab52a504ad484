"""Start-up of the `papers` command: `--help`, each paper command's `--help`, `list` and `report`, each a
whole process timed from outside, as a user waits for it. Target: at most 0.5 s (median of REPEATS).

The paper sub-apps are listed from their declarations (flows/<paper>/paper.py) and imported only when they
run, and import torch, mlflow or SCIP inside their commands, so none of these pays for them. The CPU time of the process is
recorded next to the wall time: on a loaded 2-core machine the wall time grows, the CPU time much less.
"""
from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from stages.declarations import paper_commands

from .common import ROOT, write_result

REPEATS = 5
TARGET_S = 0.5


def commands() -> list[tuple[str, ...]]:
    """The timed argument lists: a paper command's `--help` imports its module, as its commands do."""
    return [("--help",), *((command.name, "--help") for command in paper_commands(ROOT)), ("list",), ("report",)]


def timed(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `command` in the project."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> dict:
    papers = str(Path(sys.executable).with_name("papers"))
    load_before = os.getloadavg()
    commands = {}
    for args in commands():
        timed([papers, *args])  # warm the file cache: a user's second run, not the first after a build
        runs = [timed([papers, *args]) for _ in range(REPEATS)]
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        name = " ".join(["papers", *args])
        commands[name] = {"wall_s": [w for w, _ in runs], "median_s": wall, "cpu_median_s": cpu,
                          "within_target": wall <= TARGET_S}
        print(f"{name}: median {wall:.3f} s (CPU {cpu:.3f} s), target {TARGET_S} s", flush=True)
    result = {"repeats": REPEATS, "target_s": TARGET_S, "commands": commands,
              "load_average": {"before": load_before, "after": os.getloadavg()}}
    print(f"-> {write_result('cli_startup', result)}")
    return result


if __name__ == "__main__":
    main()
