"""Shared fixtures: the repository, a throwaway copy of it, and the environment stages run in."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from flows.declaration import Paper
from tasks.core.provenance import copy_project

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CLAIM_FIELDS = {"id", "statement", "paper_value", "ours", "threshold", "verdict", "reason", "interval", "passed", "details"}  # of every claim


def stage_env(root: Path) -> dict[str, str]:
    """Environment of a stage process in `root`: the venv first on PATH, the shared Prefect server,
    a store of its own (the copy's mlflow/), no inherited invocation id."""
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PAPERS_INVOCATION", "PAPERS_ROOT")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PAPERS_ROOT"] = str(root)
    return env


def papers(repo: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The `papers` command as a user runs it, in `repo`."""
    return subprocess.run([str(BIN / "papers"), *args], cwd=repo, env=stage_env(repo), capture_output=True, text=True,
                          timeout=timeout)


def dvc(repo: Path, *args: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess:
    """`dvc ARGS` in `repo` with a stage's environment; asserts success unless check is False."""
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, env=stage_env(repo),
                          capture_output=True, text=True, timeout=timeout)
    if check:
        assert done.returncode == 0, f"dvc {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def papers_by_size() -> dict[str, Paper]:
    """{slug: its declaration} of every paper, fewest stages first, then by slug: a platform test that needs a real
    paper takes the first (the cheapest to run), never a paper named in shared code."""
    from stages.declarations import declarations

    declared = declarations(ROOT)
    return {paper: declared[paper] for paper in sorted(declared, key=lambda paper: (len(declared[paper].stages), paper))}


def smoke_copy(destination: Path) -> Path:
    """A committed copy of the project (a fresh git repo) at `destination` with the smoke profile active."""
    copy = copy_project(ROOT, destination)
    params = copy / "params.yaml"
    params.write_text(re.sub(r"(?m)^profile:.*$", "profile: smoke", params.read_text()))
    subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-qam", "smoke", "--allow-empty"],
                   cwd=copy, check=True)
    return copy


def stage_metrics(repo: Path, paper: str, stage: str = "evaluate") -> dict[str, float]:
    """Every metric the paper's stage logged to MLflow (metrics.json keeps the headline only), after checking
    that metrics.json is exactly that headline: each claim's value and verdict."""
    import json

    from mlflow.tracking import MlflowClient

    from tasks.core.claims import MAX_HEADLINE_NUMBERS

    data = repo / "data" / paper
    claims = json.loads((data / "claims.json").read_text())["claims"]
    headline = json.loads((data / "metrics.json").read_text())
    for claim in claims:
        assert headline[claim["id"]] == claim["ours"]
        assert headline.get(f"{claim['id']}.pass") == (None if claim["passed"] is None else int(claim["passed"]))
    assert len(set(headline) - {c["id"] for c in claims} - {f"{c['id']}.pass" for c in claims}) <= MAX_HEADLINE_NUMBERS
    client = MlflowClient(tracking_uri=f"sqlite:///{repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(paper)
    runs = client.search_runs([experiment.experiment_id], f"tags.kind = 'stage' and tags.stage = '{stage}'",
                              order_by=["attributes.start_time DESC"], max_results=1)
    return runs[0].data.metrics


RUNTIME_FOLDERS: list[Path] = []


def private_runtime_folder() -> Path:
    """A fresh private XDG_RUNTIME_DIR (under /tmp: short enough for a socket path, unlike pytest's folders). The warm
    hosts started under it are the test's own: stopping or killing them leaves the hosts that other tests, running
    beside it under `make test`'s workers, are using. stop_private_hosts() ends them."""
    runtime = Path(tempfile.mkdtemp(prefix="papers-rt-", dir="/tmp"))
    RUNTIME_FOLDERS.append(runtime)
    return runtime


def stop_private_hosts() -> None:
    """Stop the hosts started under each private runtime folder (about 0.8 GB each) and remove the folders."""
    from stages.warm import stop_hosts

    while RUNTIME_FOLDERS:
        runtime = RUNTIME_FOLDERS.pop()
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_RUNTIME_DIR", str(runtime))
            stop_hosts()
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    return smoke_copy(tmp_path / "repo")


SMOKE_REPRO_TIMEOUT = 2400  # seconds: one bare `dvc repro` of every paper's smoke pipeline


SERVICE_FIXTURES = {"prefect_server", "smoke_repo", "repo_copy"}  # a real Prefect server, DVC runs of stages


def pytest_collection_modifyitems(items):
    """A test that uses a service fixture is an integration test (`make test-unit` leaves them out). The first
    test that asks for smoke_repo pays for the whole repro in its setup: give the tests that use it the repro's
    own limit, not make test's per-test --timeout (a loaded machine took longer than that). They must sit where
    SMOKE_GROUP finds them, so that one of `make test`'s workers builds the copy, not each."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & SERVICE_FIXTURES:
            item.add_marker(pytest.mark.integration)
        if "smoke_repo" in fixtures:
            item.add_marker(pytest.mark.timeout(SMOKE_REPRO_TIMEOUT + 300))
            if not SMOKE_GROUP.search(item.nodeid):
                raise pytest.UsageError(f"{item.nodeid} uses smoke_repo outside SMOKE_GROUP (tests/conftest.py): put it "
                                        "in tests/integration/test_<paper>_pipeline.py, or widen the pattern")


# The tests that read smoke_repo, by node id: under `make test`'s workers (pytest-xdist, --dist loadgroup) they form
# one unit of work, so one worker builds the copy while the others run the rest. pytest-xdist's own xdist_group
# mark cannot do this under pytest 9 (it renames items through an attribute pytest 9 no longer reads).
SMOKE_GROUP = re.compile(r"^tests/integration/test_\w+_pipeline\.py::|::test_warm_and_cold_smoke_runs_give_identical_claims\[")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config, log):
    """--dist loadgroup: every test on its own, except SMOKE_GROUP's, which go together (the largest unit: first)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SmokeGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "smoke_repo" if SMOKE_GROUP.search(nodeid) else nodeid

    return SmokeGroupScheduling(config, log)


@pytest.fixture(scope="session")
def smoke_repo(tmp_path_factory, prefect_server) -> Path:
    """One copy in which a bare `dvc repro` has run every paper's smoke pipeline and the claims report, as a
    user's first run would. The pipeline tests read it rather than each reproducing its paper again (CI time);
    a test that changes it must put back what it changed."""
    copy = smoke_copy(tmp_path_factory.mktemp("smoke") / "repo")
    dvc(copy, "repro", timeout=SMOKE_REPRO_TIMEOUT)
    return copy


@pytest.fixture(scope="session")
def prefect_server():
    """The project's local Prefect server (make test starts it; started here when it is not up)."""
    from stages.environment import configure

    configure(ROOT)
    from stages import server

    server.start()
    return server.api_url()
