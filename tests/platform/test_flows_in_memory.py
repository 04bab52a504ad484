"""Each paper's smoke stages, called in this process in their declared order, against a temporary Prefect store and
a temporary data folder: no DVC, no stage process, no MLflow, the thread task runner. It tells a flow's own faults
from the platform's in seconds (what `python -m stages` adds is the pipeline tests' to check).

CI runs the cheapest paper here; the others are marked slow (`make test-slow`), since CI's smoke repro already runs
every paper's flows once through DVC."""
from __future__ import annotations

import json

import pytest

from stages.runner import commit_default_models, write_claims
from stages.spec import paper_pipeline
from tasks.core.default_models import committed_default
from tasks.core.device import resolve_device
from tasks.core.io import atomic_outputs
from tasks.core.params import load_paper_params
from tasks.core.stage import StageContext, StageReport
from tests.conftest import ROOT, papers_by_size

CASES = [pytest.param(paper, marks=pytest.mark.heavy if i == 0 else pytest.mark.slow)  # heavy: a Prefect test server, ~17 s
         for i, paper in enumerate(papers_by_size())]


@pytest.fixture(scope="module")
def temporary_prefect_store():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.mark.parametrize("paper", CASES)
def test_the_smoke_stages_run_in_memory(paper, temporary_prefect_store, tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERS_TASK_RUNNER", "thread")
    pipeline = paper_pipeline(paper)
    params = load_paper_params(ROOT, paper, "smoke", pipeline.Params)
    device = resolve_device(params.device) if hasattr(params, "device") else "cpu"
    folder = tmp_path / "data" / paper
    for stage in papers_by_size()[paper].stages:
        names = stage.written
        with atomic_outputs([folder / name for name in names]) as staged:
            context = StageContext(tmp_path, paper, "smoke", "in-memory", device, stage.inputs,
                                   {name: staged[folder / name] for name in names})
            report = pipeline.STAGES[stage.name](params, context)
            assert isinstance(report, StageReport), f"{paper}-{stage.name} returned {report!r}"
            assert (report.claims is not None) == stage.claims, f"{paper}-{stage.name}: claims returned or not as declared"
            assert bool(report.models) == stage.models, f"{paper}-{stage.name}: models returned or not as declared"
            if stage.claims:
                write_claims(context, report, "in-memory", dirty=False)
            if stage.models:
                commit_default_models(context, report, "in-memory", dirty=False)
        assert all((folder / name).exists() for name in names)
        assert all(committed_default(tmp_path, name) is not None for name in report.models)
    document = json.loads((folder / "claims.json").read_text())
    assert document["paper"] == paper and document["claims"], document
    assert all(claim["passed"] in (True, False, None) for claim in document["claims"])
