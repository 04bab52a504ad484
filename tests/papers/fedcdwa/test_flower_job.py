"""`papers fedcdwa flower-job`: the Flower App and job folder for a real SuperLink; the address and the folder
checked before any work (HOST:PORT; a new or empty folder unless --force; never through a symbolic link)."""
from __future__ import annotations

import json
import os
import tomllib

import numpy as np
import pytest
from typer.testing import CliRunner

from flows.fedcdwa.cli import app
from flows.fedcdwa.flower_job import check_address
from tasks.core.inputs import InputError

QUICK = ["--clients", "3", "--rounds", "2", "--local-epochs", "1"]
PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def job(out, *more: str):
    return CliRunner().invoke(app, ["flower-job", "--superlink", "superlink.lab.example:9093", "--out", str(out),
                                    *QUICK, *more])


def test_writes_app_job_clients_and_connection(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text(PEM)
    out = tmp_path / "job"
    result = job(out, "--root-certificates", str(ca), "--participation", "0.5")
    assert result.exit_code == 0, result.output
    assert {p.name for p in (out / "app").iterdir()} == {"pyproject.toml", "fedcdwa_flower.py"}
    app_toml = tomllib.loads((out / "app" / "pyproject.toml").read_text())
    assert app_toml["tool"]["flwr"]["app"]["components"]["serverapp"] == "fedcdwa_flower:server_app"
    connection = tomllib.loads((out / "flwr_home" / "config.toml").read_text())
    assert connection["superlink"]["default"] == "fedcdwa"
    assert connection["superlink"]["fedcdwa"] == {"address": "superlink.lab.example:9093",
                                                  "root-certificates": str((out / "flwr_home" / "ca.pem").absolute())}
    document = json.loads((out / "server" / "job.json").read_text())
    assert document["n_clients"] == 3 and document["config"]["participation"] == 0.5
    assert document["test"] == "test.npz" and (out / "server" / "test.npz").exists()  # relative: the folder moves
    for k in range(3):
        with np.load(out / "clients" / f"client_{k}.npz") as arrays:
            assert set(arrays.files) == {"x_train", "y_train", "x_test", "y_test", "x_val", "y_val"}
    run = (out / "RUN.md").read_text()
    assert "superlink.lab.example:9092" in run and "flwr run" in run and "--root-certificates" in run


@pytest.mark.parametrize("address", ["localhost", "host:0", "host:65536", "https://host:9093", "[::1:9093", "[zz]:9093",
                                     "300.1.1.1:9093", "a b:9093", ":9093", "host:9093;rm", "-host:9093", "host:+9"])
def test_bad_addresses_are_refused(address):
    with pytest.raises(InputError, match=r"^--superlink: must be HOST:PORT"):
        check_address(address)


@pytest.mark.parametrize("address", ["localhost:9093", "10.0.0.7:1", "[::1]:9093", "link-1.lab:65535"])
def test_good_addresses_pass(address):
    assert check_address(address) == address


def test_a_non_empty_folder_needs_force(tmp_path):
    out = tmp_path / "job"
    assert job(out, "--clients", "4").exit_code == 0
    again = job(out)
    assert isinstance(again.exception, InputError) and "--force" in str(again.exception)
    assert job(out, "--force").exit_code == 0
    assert sorted(p.name for p in (out / "clients").iterdir()) == [f"client_{k}.npz" for k in range(3)]  # 4th gone


def test_symbolic_links_are_never_followed(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    refused = job(link)
    assert isinstance(refused.exception, InputError) and "symbolic link" in str(refused.exception)
    out = tmp_path / "job"
    assert job(out).exit_code == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / "RUN.md").unlink()
    (out / "RUN.md").symlink_to(victim)
    planted = job(out, "--force")
    assert isinstance(planted.exception, InputError) and "RUN.md" in str(planted.exception)
    assert victim.read_text() == "keep me" and not any(target.iterdir())


@pytest.mark.parametrize("args, culprit", [
    (["--superlink", "nohost", "--out", "{tmp}/a"], "--superlink"),
    (["--superlink", "h:9093", "--out", "{tmp}/missing/job"], "--out"),
    (["--superlink", "h:9093", "--out", "{tmp}/file"], "--out"),
    (["--superlink", "h:9093", "--out", "{tmp}/a", "--participation", "0"], "--participation"),
    (["--superlink", "h:9093", "--out", "{tmp}/a", "--participation", "1.5"], "--participation"),
    (["--superlink", "h:9093", "--out", "{tmp}/a", "--root-certificates", "{tmp}/file"], "--root-certificates"),
    (["--superlink", "h:9093", "--out", "{tmp}/a", "--root-certificates", "{tmp}/file", "--insecure"], "--insecure"),
])
def test_bad_options_name_the_culprit(tmp_path, args, culprit):
    (tmp_path / "file").write_text("not a certificate")
    result = CliRunner().invoke(app, ["flower-job", *(a.format(tmp=tmp_path) for a in args)])
    assert isinstance(result.exception, InputError) and str(result.exception).startswith(culprit), result.output
    assert not (tmp_path / "a").exists()  # refused before any work


def test_insecure_connection_says_so(tmp_path):
    out = tmp_path / "job"
    assert job(out, "--insecure").exit_code == 0
    assert tomllib.loads((out / "flwr_home" / "config.toml").read_text())["superlink"]["fedcdwa"]["insecure"] is True
    assert "Insecure" in (out / "RUN.md").read_text()
    assert os.stat(out / "server" / "job.json").st_size > 0
