"""The image built and run for real: a paper's smoke pipeline gives the same claims inside the image as outside, and
a Prefect worker runs a deployment's flow inside the image.

Slow suite (`make test-slow`), not CI: CI's machine has no podman, and a first build (the pinned lock, torch included)
takes longer than CI's 20 minutes hold for everything. Skipped where podman or buildah is missing. Later builds reuse
the dependency layer: only the project's code layers are rebuilt.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stages import container
from tests.conftest import ROOT, dvc, papers_by_size, stage_env

MISSING = [tool for tool in ("podman", "buildah") if shutil.which(tool) is None]
pytestmark = [pytest.mark.integration, pytest.mark.slow,
              pytest.mark.skipif(bool(MISSING), reason=f"needs {' and '.join(MISSING)} to build and run the image "
                                                       "(Debian: apt-get install podman buildah mmdebstrap)")]

PAPER = next(iter(papers_by_size()))
PREFECT = str(Path(sys.executable).with_name("prefect"))
# Where and when a result was made, not what it is: these differ between any two runs.
PROVENANCE = {"commit", "git_dirty", "mlflow_run_id"}


def numbers(document):
    """A claims document without its provenance and timings (keys naming time, seconds or wall clock)."""
    if isinstance(document, dict):
        return {key: numbers(value) for key, value in document.items()
                if key not in PROVENANCE and not re.search(r"time|seconds|wall", key)}
    if isinstance(document, list):
        return [numbers(value) for value in document]
    return document


@pytest.fixture(scope="module")
def image() -> str:
    built = container.build()
    print(f"built {built['image']} on {built['base']} in {built['seconds']} s: {built['bytes'] / 1e9:.2f} GB")
    return built["image"]


def in_image(image: str, *command: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stages.container", "run", "--image", image, "--profile", "smoke", "--",
                           *command], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_smoke_claims_inside_the_image_equal_those_outside(image, repo_copy, prefect_server):
    dvc(repo_copy, "repro", f"stages/{PAPER}/dvc.yaml")
    outside = json.loads((repo_copy / "data" / PAPER / "claims.json").read_text())
    # Against the host's Prefect server (forwarded PREFECT_API_URL) and the image's own, fresh MLflow store.
    done = in_image(image, "sh", "-c", f"test ! -e mlflow && dvc repro stages/{PAPER}/dvc.yaml >&2 "
                                       f"&& cat data/{PAPER}/claims.json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    inside = json.loads(done.stdout)
    assert inside["profile"] == outside["profile"] == "smoke"
    assert numbers(inside) == numbers(outside)


def test_a_prefect_worker_runs_the_deployment_inside_the_image(image, repo_copy, prefect_server):
    # Under test names, so a developer's own deployment and work pool are left alone; the smoke profile in the image.
    prefect_yaml = repo_copy / "prefect.yaml"
    prefect_yaml.write_text(prefect_yaml.read_text().replace("papers-image", "papers-test-image")
                            .replace(f"{PAPER}-pipeline-image", f"{PAPER}-pipeline-image-test")
                            .replace("stages.container run --image localhost/papers:cpu",
                                     f"stages.container run --image {image} --profile smoke"))
    env = stage_env(repo_copy)
    committed_claims = (repo_copy / "data" / PAPER / "claims.json").read_bytes()

    def prefect(*args, timeout=600, environment=env):
        done = subprocess.run([PREFECT, *args], cwd=repo_copy, env=environment, capture_output=True, text=True,
                              timeout=timeout)
        assert done.returncode == 0, f"prefect {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    prefect("work-pool", "create", "papers-test-image", "--type", "process", "--overwrite")
    prefect("--no-prompt", "deploy", "--name", f"{PAPER}-pipeline-image-test")
    try:
        started = prefect("deployment", "run", f"reproduce-paper/{PAPER}-pipeline-image-test")
        flow_run_id = re.search(r"UUID:\s*([0-9a-f-]{36})", started).group(1)
        # The worker from a plain shell: the system python3 and buildah on PATH, nothing of the project's venv.
        plain_shell = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "DO_NOT_TRACK": "true"}
        prefect("worker", "start", "--pool", "papers-test-image", "--run-once", timeout=1800, environment=plain_shell)
        inspected = prefect("flow-run", "inspect", flow_run_id)
        assert re.search(r"COMPLETED", inspected), inspected
        # The flow ran in the image's /app, not in the checkout it was deployed from (whose results are untouched).
        assert f"dvc repro stages/{PAPER}/dvc.yaml in /app" in prefect("flow-run", "logs", flow_run_id)
        assert (repo_copy / "data" / PAPER / "claims.json").read_bytes() == committed_claims
    finally:
        subprocess.run([PREFECT, "--no-prompt", "deployment", "delete", f"reproduce-paper/{PAPER}-pipeline-image-test"],
                       cwd=repo_copy, env=env, capture_output=True)
