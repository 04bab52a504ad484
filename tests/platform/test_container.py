"""stages/container.py without a container engine (CI has none): the pip sources it hands the build, the build
command, what a run forwards, the deployments that use it. The image built and run: tests/integration/test_container.py."""
from __future__ import annotations

import shutil
import stat
import subprocess
import sys
from pathlib import Path

import yaml

from stages import container
from stages.cli import deployment_of
from stages.spec import papers
from tests.conftest import ROOT


def test_a_normal_users_pip_needs_no_sources_and_no_mounts():
    assert container.pip_sources({}) == ([], [])
    options, mounts = container.pip_sources({"index-url": "https://mirror.example/simple", "timeout": "60"})
    assert options == ["--index-url", "https://mirror.example/simple"] and mounts == []


def test_local_pip_sources_are_passed_and_mounted_at_their_own_path(tmp_path):
    wheels, index, cert = tmp_path / "wheels", tmp_path / "pypi" / "simple", tmp_path / "ca.crt"
    wheels.mkdir()
    index.mkdir(parents=True)
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    settings = {"find-links": str(wheels), "extra-index-url": f"file://{index} https://pypi.example/simple",
                "cert": str(cert)}
    options, mounts = container.pip_sources(settings)
    assert options == ["--extra-index-url", f"file://{index}", "--extra-index-url", "https://pypi.example/simple",
                       "--find-links", str(wheels), "--cert", str(cert)]
    # An index's simple/ pages link to ../../files: its parent folder is mounted.
    assert mounts == sorted([wheels, index.parent]) + [cert]
    command = container.build_command(tmp_path, "localhost/papers:cpu", container.LOCAL_BASE, "cpu", "", options, mounts,
                                      "chroot", "abc")
    assert f"{wheels}:{wheels}:ro" in command and f"{cert}:{cert}:ro" in command
    assert "TORCH_INDEX=" in command and f"BASE={container.LOCAL_BASE}" in command and command[-1] == str(tmp_path)


def test_a_missing_local_source_is_not_mounted(tmp_path):
    options, mounts = container.pip_sources({"find-links": str(tmp_path / "absent")})
    assert options == ["--find-links", str(tmp_path / "absent")] and mounts == []


def test_the_host_pip_configuration_is_read_with_its_variables_winning(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "pip.conf"))
    (tmp_path / "pip.conf").write_text("[global]\nfind-links = /from/file\nextra-index-url = file:///x/simple\n")
    monkeypatch.setenv("PIP_FIND_LINKS", "/from/variable")
    settings = container.pip_config()
    assert settings["find-links"] == "/from/variable" and "file:///x/simple" in settings["extra-index-url"]


def test_a_run_forwards_prefect_settings_but_not_host_paths():
    flags = container.forwarded_env({"PREFECT_API_URL": "http://127.0.0.1:4200/api", "PREFECT__FLOW_RUN_ID": "f00",
                                     "PREFECT_HOME": "/root/.prefect", "MLFLOW_TRACKING_URI": "sqlite:///x", "PATH": "/b"})
    assert flags == ["--env=PREFECT_API_URL=http://127.0.0.1:4200/api", "--env=PREFECT__FLOW_RUN_ID=f00"]


def test_a_run_passes_the_servers_credential_in_a_private_file_never_on_the_command_line(tmp_path):
    environ = {"PREFECT_API_URL": "http://127.0.0.1:4200/api", "PREFECT_API_AUTH_STRING": "papers:it's $ecret"}
    assert container.forwarded_env(environ) == ["--env=PREFECT_API_URL=http://127.0.0.1:4200/api"]
    tmp_path.chmod(0o700)
    secrets = container.secrets_file(environ, tmp_path)
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    # The wrapper as the container's shell runs it, the file where the mount puts it.
    command = container.with_secrets(["python3", "-c", "import os; print(os.environ['PREFECT_API_AUTH_STRING'])"])
    script = command[2].replace(container.SECRET_MOUNT, str(secrets))
    done = subprocess.run([*command[:2], script, *command[3:]], capture_output=True, text=True, check=True)
    assert done.stdout == "papers:it's $ecret\n"
    assert "$ecret" not in " ".join(command) and container.secrets_file({"PATH": "/b"}, tmp_path) is None


def test_the_context_is_what_a_clean_clone_holds(tmp_path):
    context = container.copy_project_files(ROOT, tmp_path)
    assert (context / "Dockerfile").is_file() and (context / "requirements.lock").is_file()
    assert (context / "stages" / "container.py").is_file()
    for left_out in (".git", ".venv", "mlflow", ".prefect", ".dvc/tmp", ".dvc/cache"):
        assert not (context / left_out).exists(), left_out


def test_dockerignore_keeps_environments_and_stores_out_of_a_plain_build():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", ".prefect", "mlflow", ".dvc/cache", ".dvc/tmp"} <= ignored


def test_the_image_runs_as_a_non_root_user():
    users = [line.split()[1] for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("USER ")]
    assert users and all(not user.startswith(("root", "0")) for user in users)


def test_every_paper_has_a_deployment_in_the_image_for_each_engine():
    deployments = {d["name"]: d for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]}
    for paper in papers(ROOT):
        for kind, pool in (("image", "papers-image"), ("docker", "papers-docker")):
            deployment = deployments[f"{paper}-pipeline-{kind}"]
            assert deployment["parameters"] == {"paper": paper, "root": "/app"}
            assert deployment["pull"][0]["prefect.deployments.steps.set_working_directory"]["directory"] == "/app"
            assert deployment["work_pool"]["name"] == pool
    for image in (False, True):  # what `papers deploy PAPER [--image]` registers is there, on its pool
        pool, name = deployment_of(papers(ROOT)[0], image)
        assert deployments[name]["work_pool"]["name"] == pool
    command = deployments[f"{papers(ROOT)[0]}-pipeline-image"]["work_pool"]["job_variables"]["command"]
    assert command.split()[:4] == ["python3", "-m", "stages.container", "run"]


def test_a_missing_tool_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert container.main(["run", "--", "true"]) == 2
    assert capsys.readouterr().err.strip() == "error: run needs buildah (Debian: apt-get install buildah)"


def test_the_module_runs_under_a_bare_python_from_the_checkout():
    # The worker's command is `python3 -m stages.container`: the standard library must be enough.
    done = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, '.'); import stages.container"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert Path(container.__file__).parent == ROOT / "stages"
