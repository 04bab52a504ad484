"""The unidrag smoke profile end to end through DVC, Prefect and MLflow: data set files, splits,
solver validation, surrogates, optimisations and their LBM verification, claims V1-V3 and C1-C3
undecided but finite, a rerun is a no-op; then `papers unidrag predict/optimize` on a user's STL."""
from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh
from mlflow.tracking import MlflowClient

from tasks.cfd.vehicles import export_stl, sample_family
from tests.conftest import CLAIM_FIELDS, dvc, papers

pytestmark = pytest.mark.integration


def test_smoke_pipeline_and_a_users_mesh(smoke_repo, tmp_path):

    data = smoke_repo / "data" / "unidrag"
    shapes, labels = sorted((data / "shapes").glob("*.npz")), sorted((data / "labels").glob("*.npz"))
    assert len(shapes) == len(labels) == 16
    with np.load(shapes[0]) as shape, np.load(labels[0]) as label:
        assert shape["contour"].shape == (256, 2) and shape["params"].shape == shape["parameter_names"].shape
        assert label["surface_points"].shape == label["surface_normals"].shape == (64, 2)
        assert label["volume_points"].shape == (128, 2) and label["volume_u"].shape == (128, 2)
        assert label["profile"].shape == (32,) and label["cd_trace"].shape == (600,)
        assert label["profile"][-1] == pytest.approx(float(label["cd"]), rel=1e-6)
        assert all(np.isfinite(label[k]).all() for k in ("surface_cp", "volume_cp", "volume_u", "cd_trace"))
    split = json.loads((data / "splits.json").read_text())
    assert {k: len(v) for k, v in split.items()} == {"train": 8, "val": 4, "test": 4}
    assert sorted(i for part in split.values() for i in part) == list(range(16))
    dataset = json.loads((data / "dataset_metrics.json").read_text())
    assert dataset["nan_count"] == 0 and dataset["diverged"] == 0 and dataset["mlups_per_worker"] > 0
    validation = json.loads((data / "lbm_validation.json").read_text())
    assert 4 <= validation["cd_mean"] <= 9 and validation["diameter_cells"] == 6  # spec §8: smoke range
    claims = json.loads((data / "claims.json").read_text())
    assert [c["id"] for c in claims["claims"]] == ["V1", "V2", "V3", "C1", "C2", "C3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    c1, c2, c3 = claims["claims"][3:]
    assert c1["ours"] <= 1 and set(c1["details"]["models"]) == {"unidrag", "transolver", "pointnet", "gbt"}
    gain = c1["details"]["absolute_gain_interval"]
    assert gain["ci_low"] <= gain["ci_high"] and all("r2_cd_interval" in m for m in c1["details"]["models"].values())
    report = json.loads((data / "train_report.json").read_text())
    assert all(r["val_curve"] and r["best_step"] <= r["steps_run"] <= 8 for r in report if r["kind"] != "gbt")
    for method in ("eot", "no_eot"):
        summary = c3["details"]["methods"][method]
        assert summary["shapes"] == 2 and 0 <= summary["success_rate"] <= 1 and 0 <= summary["constraint_rate"] <= 1
        assert all(np.isfinite(v) for v in summary.values())
        assert 0 < summary["mean_displacement_pct_l"] <= 6 + 1e-9  # delta_max 0.06 L
    methods = c3["details"]["methods"]
    assert np.isfinite(c2["ours"]) and c3["ours"] == pytest.approx(methods["eot"]["gap"] - methods["no_eot"]["gap"])
    verified = json.loads((data / "verified.json").read_text())
    assert len(verified) == 4 and all(v["constraints_hold"] for v in verified)
    assert all(len(v["profile_opt"]) == 32 and v["profile_opt"][-1] == pytest.approx(v["cd_opt"], rel=1e-6) for v in verified)
    assert {p.name for p in (data / "models").iterdir()} == {"unidrag-seed0.pt", "transolver-seed0.pt", "pointnet-seed0.pt",
                                                            "gbt.pkl"}
    assert len(list((data / "opt").glob("*.npz"))) == 4
    for plot in ("cd_per_body_type", "surface_cp", "drag_profiles", "convergence", "predicted_vs_lbm_cd",
                 "surface_cp_predicted", "drag_profiles_opt", "deformed_silhouettes", "validation_curves"):
        assert (data / "plots" / f"{plot}.png").exists(), plot

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("unidrag")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "validate", "train", "solve", "calibrate", "evaluate"}
    assert all(r.info.status == "FINISHED" for r in stages.values())
    assert stages["generate"].data.metrics["nan_count"] == 0
    assert client.search_model_versions("name = 'unidrag-surrogate'")

    again = dvc(smoke_repo, "repro", "stages/unidrag/dvc.yaml")
    assert "didn't change" in again.stdout or "up to date" in again.stdout

    # A user's STL: a generated 3D vehicle in millimetres (its nose section keeps a finite height).
    mesh = sample_family(4, 0)[2].mesh()
    mesh.apply_scale(4630.0)
    stl = export_stl(mesh, tmp_path / "car.stl")
    done = papers(smoke_repo, "unidrag", "predict", str(stl), "--json")
    assert done.returncode == 0, done.stderr
    prediction = json.loads(done.stdout)
    assert np.isfinite(prediction["cd"]) and len(prediction["profile"]) == 32
    assert prediction["length_scale"] == pytest.approx(4630.0)
    out = tmp_path / "car_optimized.stl"
    done = papers(smoke_repo, "unidrag", "optimize", str(stl), "--max-displacement", "0.04", "--steps", "5",
                  "--transformations", "2", "--verify", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    constraints = result["constraints"]
    assert constraints["hold"] and constraints["max_control_displacement"] <= 0.04 + 1e-12
    assert abs(constraints["area_ratio"] - 1) <= 0.02 and np.isfinite(result["predicted_drag_force"])
    assert set(result["verified"]) >= {"cd_base", "cd_opt", "verified_reduction", "success"}
    deformed = trimesh.load(out, force="mesh")
    assert deformed.is_watertight and np.ptp(deformed.vertices[:, 0]) == pytest.approx(4630.0, rel=1e-6)

    broken = trimesh.Trimesh(mesh.vertices, mesh.faces[:-3], process=False)
    failed = papers(smoke_repo, "unidrag", "predict", str(export_stl(broken, tmp_path / "open.stl")))
    assert failed.returncode == 2 and "not watertight" in failed.stderr and "open.stl" in failed.stderr
