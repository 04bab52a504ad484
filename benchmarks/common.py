"""Where results go and what they say about the machine that measured them."""
from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from tasks.core.provenance import git_commit, git_dirty

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def write_result(name: str, result: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    # The load beside the timings: a figure measured on a busy machine says so.
    document = {"benchmark": name, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "commit": git_commit(ROOT), "dirty": git_dirty(ROOT), "machine": platform.machine(),
                "cpus": os.cpu_count(), "load_average_1m": round(os.getloadavg()[0], 2),
                "python": platform.python_version(), "numpy": np.__version__, **result}
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path
