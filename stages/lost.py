"""A stage whose warm host ended under it: FAILED in MLflow and Crashed in Prefect, as its caller reports to DVC.

The kernel kills a warm child with its host (stages/warm_host.py: die_with_host), so neither the stage nor
its tracking companion (a warm child too) can close their runs. The caller, still alive, does it for them:
the stage's runs carry the child's pid tag (`stage_process` in MLflow, `papers-pid:...` in Prefect).
"""
from __future__ import annotations

import sys
from pathlib import Path

from .environment import home_repository
from .flow_runs import crash_open_runs, pid_tag

REASON = "the warm host running the stage ended while it ran"


def fail_lost_stage(root: Path, argv: list[str], child: int) -> None:
    """Close the MLflow runs of `python -m stages PAPER STAGE` that ran as warm child `child` FAILED and crash
    its Prefect flow runs; bookkeeping on the way out, so a store that cannot answer only says so."""
    if len(argv) != 2:
        return
    try:
        fail_mlflow_runs(home_repository(root), argv[0], pid_tag(child))
    except Exception as error:  # noqa: BLE001 - the stage has failed already; this must not hide why
        print(f"warning: could not mark the stage's MLflow run FAILED: {error}", file=sys.stderr)
    crash_open_runs(REASON, owner=pid_tag(child))


def fail_mlflow_runs(root: Path, paper: str, owner: str) -> int:
    """Every RUNNING stage run of `paper` whose stage process was `owner`, and its pipeline run: FAILED."""
    from tasks.core import tracking

    client = tracking.client_for(root)
    experiment = client.get_experiment_by_name(paper)
    if experiment is None:
        return 0
    runs = client.search_runs([experiment.experiment_id], f"tags.stage_process = '{owner}' and "
                                                         "attributes.status = 'RUNNING'")
    for run in runs:
        tracking.set_tags(client, run.info.run_id, {"error": REASON})
        tracking.finish(client, run.info.run_id, ok=False)
        if parent := run.data.tags.get("mlflow.parentRunId"):
            tracking.mark_parent(client, parent, ok=False)
    return len(runs)
