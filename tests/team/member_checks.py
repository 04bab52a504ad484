"""Run by tests/team/test_team.py as member B through `papers team exec`: what B's MLflow login reads of the
paper's runs, and what a write to one of them gets, with B's login and with none. Prints one JSON line."""
from __future__ import annotations

import json
import os
import sys

from mlflow.exceptions import MlflowException, RestException
from mlflow.tracking import MlflowClient


def write_status(client: MlflowClient, run_id: str) -> int | str:
    """The HTTP status a tag write gets (an MlflowException says it in its message), or 'allowed'."""
    try:
        client.set_tag(run_id, "written_by", "someone else")
    except (MlflowException, RestException) as error:
        return next((code for code in (401, 403) if f"error code {code}" in str(error)), str(error)[:200])
    return "allowed"


def main(paper: str) -> None:
    client = MlflowClient()
    experiment = client.get_experiment_by_name(paper)
    runs = client.search_runs([experiment.experiment_id], filter_string="tags.kind = 'stage'")
    finished = [run for run in runs if run.info.status == "FINISHED"]
    seen = {"run_ids": [run.info.run_id for run in runs],
            "finished": sorted({run.data.tags["stage"] for run in finished}),
            "artifact_uri": finished[0].info.artifact_uri,
            "write_with_own_login": write_status(client, finished[0].info.run_id)}
    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        os.environ.pop(name)
    seen["write_without_login"] = write_status(MlflowClient(), finished[0].info.run_id)
    print(json.dumps(seen))


if __name__ == "__main__":
    main(sys.argv[1])
