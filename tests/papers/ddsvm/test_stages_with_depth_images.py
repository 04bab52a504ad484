"""ddsvm's three stages in this process on a tiny profile with both data sources (the digits and the generated depth
images): the depth images beside the splits, their runs, C6 decided on their rows alone, their plots and metrics."""
from __future__ import annotations

import json

import pytest

from flows.ddsvm import pipeline
from flows.ddsvm.params import Params
from stages.runner import write_claims
from tasks.core.io import atomic_outputs
from tasks.core.stage import StageContext

pytestmark = pytest.mark.slow  # a Prefect test server and eight small trainings

PARAMS = {"seed": 0, "gate_k": 2, "shapes_k": 2, "shapes_per_class": 4, "decide_claims": True,
          "methods": {"ce": {"loss": "ce"}, "ddsvm": {"loss": "ddsvm"}},
          "training": {"epochs": 2, "lr": 1e-3, "weight_decay": 0.0, "svm_C": 1.0, "feature_dim": 8, "width": 2,
                       "cosine_scale": 10.0, "augment_shift": 1, "upsample": 1},
          "sweeps": [{"k": 2, "seeds": 2, "methods": ["ce", "ddsvm"]},
                     {"data": "shapes", "k": 2, "seeds": 2, "methods": ["ce", "ddsvm"], "epochs": 1}]}
OUTPUTS = {"generate": ("splits",), "train": ("models",),
           "evaluate": ("claims.json", "metrics.json", "results.csv", "plots")}


@pytest.fixture(scope="module")
def temporary_prefect_store():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


def test_both_data_sources_run_and_c6_reads_the_depth_images(temporary_prefect_store, tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERS_TASK_RUNNER", "thread")
    params = Params(**PARAMS)
    folder = tmp_path / "data" / "ddsvm"
    reports = {}
    for stage, names in OUTPUTS.items():
        with atomic_outputs([folder / name for name in names]) as staged:
            context = StageContext(tmp_path, "ddsvm", "test", "in-memory", "cpu", ("splits", "models"),
                                   {name: staged[folder / name] for name in names})
            reports[stage] = pipeline.STAGES[stage](params, context)
            if stage == "evaluate":
                write_claims(context, reports[stage], "in-memory", dirty=False)
    assert reports["generate"].metrics["shapes.images"] == 40 and reports["generate"].metrics["shapes_k2.n_test"] == 20
    assert (folder / "splits" / "split_shapes_k2_s1.npz").exists() and (folder / "models" / "ce_shapes_k2_s1.json").exists()
    claims = {c["id"]: c for c in json.loads((folder / "claims.json").read_text())["claims"]}
    assert list(claims) == ["C1", "C2", "C3", "C4", "C5", "C6"]
    shapes_rows = [r for r in (folder / "results.csv").read_text().splitlines() if ",shapes," in r]
    assert len(shapes_rows) == 4 and claims["C6"]["details"]["comparison"]["seeds"] == 2
    assert claims["C6"]["verdict"] in ("pass", "fail", "inconclusive")
    assert claims["C6"]["ours"] != claims["C2"]["ours"]
    assert (folder / "plots" / "shapes_examples.png").exists() and (folder / "plots" / "shapes_errors_by_method.png").exists()
    assert "shapes_k2.ce.svm_error" in reports["evaluate"].metrics
