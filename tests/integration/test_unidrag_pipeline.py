"""The unidrag smoke profile end to end through DVC, Prefect and MLflow: data set files, splits,
solver validation, claims V1-V3 undecided, a rerun is a no-op."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.integration.test_pipeline import CLAIM_FIELDS, dvc

pytestmark = pytest.mark.integration


def test_smoke_pipeline_writes_a_complete_dataset(repo_copy, prefect_server):
    dvc(repo_copy, "repro", "stages/unidrag/dvc.yaml")

    data = repo_copy / "data" / "unidrag"
    shapes, labels = sorted((data / "shapes").glob("*.npz")), sorted((data / "labels").glob("*.npz"))
    assert len(shapes) == len(labels) == 16
    with np.load(shapes[0]) as shape, np.load(labels[0]) as label:
        assert shape["contour"].shape == (512, 2) and shape["params"].shape == shape["parameter_names"].shape
        assert label["surface_points"].shape == label["surface_normals"].shape == (64, 2)
        assert label["volume_points"].shape == (128, 2) and label["volume_u"].shape == (128, 2)
        assert label["profile"].shape == (32,) and label["cd_trace"].shape == (800,)
        assert label["profile"][-1] == pytest.approx(float(label["cd"]), rel=1e-6)
        assert all(np.isfinite(label[k]).all() for k in ("surface_cp", "volume_cp", "volume_u", "cd_trace"))
    split = json.loads((data / "splits.json").read_text())
    assert {k: len(v) for k, v in split.items()} == {"train": 12, "val": 0, "test": 4}
    assert sorted(i for part in split.values() for i in part) == list(range(16))
    dataset = json.loads((data / "dataset_metrics.json").read_text())
    assert dataset["nan_count"] == 0 and dataset["diverged"] == 0 and dataset["mlups_per_worker"] > 0
    validation = json.loads((data / "lbm_validation.json").read_text())
    assert 4 <= validation["cd_mean"] <= 9 and validation["diameter_cells"] == 6  # spec §8: smoke range
    claims = json.loads((data / "claims.json").read_text())
    assert [c["id"] for c in claims["claims"]] == ["V1", "V2", "V3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    for plot in ("cd_per_body_type", "surface_cp", "drag_profiles", "convergence"):
        assert (data / "plots" / f"{plot}.png").exists()

    client = MlflowClient(tracking_uri=f"sqlite:///{repo_copy / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("unidrag")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "validate", "evaluate"}
    assert all(r.info.status == "FINISHED" for r in stages.values())
    assert stages["generate"].data.metrics["nan_count"] == 0

    again = dvc(repo_copy, "repro", "stages/unidrag/dvc.yaml")
    assert "didn't change" in again.stdout or "up to date" in again.stdout
