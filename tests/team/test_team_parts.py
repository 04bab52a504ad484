"""The team profile's parts that need no server: certificates, the recorded ports, bundles and bad input."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stages import team, team_services, team_tls
from tasks.core.inputs import InputError


def private(path: Path) -> Path:
    path.mkdir(mode=0o700)
    return path


def test_certificates_are_signed_by_the_team_ca_and_keys_private(tmp_path):
    from cryptography import x509

    folder = private(tmp_path / "tls")
    team_tls.ensure_ca(folder)
    certificate_path, key_path = team_tls.issue(folder, folder, "worker-1")
    ca = x509.load_pem_x509_certificate((folder / "ca.pem").read_bytes())
    certificate = x509.load_pem_x509_certificate(certificate_path.read_bytes())
    certificate.verify_directly_issued_by(ca)
    assert certificate.subject.rfc4514_string() == "CN=worker-1"
    assert all(os.stat(path).st_mode & 0o077 == 0 for path in (key_path, folder / "ca.key"))
    other = private(tmp_path / "other")
    team_tls.ensure_ca(other)
    stranger = x509.load_pem_x509_certificate(team_tls.issue(other, other, "worker-1")[0].read_bytes())
    with pytest.raises(Exception):
        stranger.verify_directly_issued_by(ca)


def test_layout_keeps_its_first_port(tmp_path):
    root = tmp_path / ".team"
    assert team_services.load_layout(root, 6100).ports["dvc-remote"] == 6105
    assert team_services.load_layout(root, None).port == 6100
    with pytest.raises(team_services.TeamError, match="--port 6200: this team folder's services use port 6100"):
        team_services.load_layout(root, 6200)
    assert os.stat(root).st_mode & 0o077 == 0


def bundle(folder: Path) -> Path:
    private(folder)
    document = {"mlflow": {"uri": "http://127.0.0.1:5431", "username": "alice", "password": "pw"},
                "prefect": {"url": "http://127.0.0.1:5432/api", "auth": "team:x"},
                "dask": {"address": "tls://127.0.0.1:5433"}}
    (folder / team.BUNDLE_FILE).write_text(json.dumps(document))
    (folder / team.BUNDLE_FILE).chmod(0o600)
    return folder


def test_client_environment_points_at_the_team(tmp_path):
    env = team.client_environment(bundle(tmp_path / "client"))
    assert env["PAPERS_TASK_RUNNER"] == "dask" and env["PAPERS_DASK_ADDRESS"] == "tls://127.0.0.1:5433"
    assert env["MLFLOW_TRACKING_USERNAME"] == "alice" and env["PAPERS_WARM"] == "0"
    assert env["DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY"] == str(tmp_path / "client" / "member.key")
    assert env["SSL_CERT_FILE"] == str(tmp_path / "client" / "ca.pem")  # DVC trusts the team's remote by it alone


def test_a_bundle_others_can_read_is_refused(tmp_path):
    folder = bundle(tmp_path / "client")
    folder.chmod(0o755)
    with pytest.raises(InputError, match="group or others can reach it"):
        team.client_environment(folder)


@pytest.mark.parametrize("args, message", [(["up", "--port", "80"], "--port: must be in 1024..65530, got 80"),
                                           (["member", "Bad Name"], "NAME: must be a login name")])
def test_bad_input_is_one_line_and_exit_2(args, message):
    done = CliRunner().invoke(team.app, args)
    assert done.exit_code == 2 and message in done.output and "Traceback" not in done.output
