"""`papers neural-qaoa2 solve` on hostile input: one line naming the culprit, exit 2, no traceback, no allocation blind
(tests/cli_table.py). The table runs from tmp_path, outside the checkout. Rows that would look the networks up in
the MLflow registry are left out: the child's PAPERS_ROOT is the checkout, whose store a test must not write
(test_registered_networks_resolve covers the lookup in-process).
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.cli_table import bad, check_rows, ok, write


@pytest.fixture(scope="module")
def networks(tmp_path_factory) -> Path:
    """A tiny pair of QAOA^2 networks, untrained: enough for the neural policy to run."""
    from tasks.quantum.critic import Critic
    from tasks.quantum.generator import JointGenerator, save_networks

    path = tmp_path_factory.mktemp("models") / "networks.pt"
    save_networks(path, Critic(width=8, layers=1), JointGenerator(width=8, layers=1), {"tiny": True, "scorer": "critic"})
    return path


@pytest.mark.heavy  # a table of 29 rows in a child process that imports torch: ~5-10 s
def test_qaoa2_solve(tmp_path, networks):
    graph = write(tmp_path / "ring.txt", "# u v w\n0 1 1\n1 2 2\n2 3 1\n3 0 1\n0 2 -1\n")
    f = lambda name, text: write(tmp_path / name, text)  # noqa: E731
    solve = ("neural-qaoa2", "solve")
    torch.save({"weights": {}}, other := tmp_path / "other.pt")  # a torch file of another kind
    old = tmp_path / "old.pt"  # the networks of the MSE-only critic (before issue 42): no format, no scorer
    torch.save({key: value for key, value in torch.load(networks).items() if key != "format"} | {"config": {}}, old)
    check_rows([
        ok(*solve, "--help"),
        ok(*solve, graph, "--policy", "kl", "--out", str(tmp_path / "sides.txt")),
        ok(*solve, graph, "--policy", "neural", "--networks", str(networks), "--tta-steps", "1", "--json"),
        ok(*solve, f("q.txt", "1 -2\n-2 3\n"), "--qubo", "--policy", "random"),
        bad((*solve, f("far.txt", "0 1000000000 1\n"), "--policy", "kl"), "far.txt:1", "node 1000000000", "10,000 nodes"),
        bad((*solve, f("heavy.txt", "0 1 1e308\n1 2 1e308\n0 2 1\n"), "--policy", "kl"), "heavy.txt:1", "1e308", "1e+12"),
        bad((*solve, f("nan.txt", "0 1 nan\n"), "--policy", "kl"), "nan.txt:1", "finite"),
        bad((*solve, f("blob.txt", bytes(range(256)) * 4), "--policy", "kl"), "blob.txt", "binary"),
        bad((*solve, f("latin1.txt", b"0 1 \xe9\n"), "--policy", "kl"), "latin1.txt", "UTF-8"),
        bad((*solve, str(tmp_path / "missing.txt"), "--policy", "kl"), "missing.txt", "no such file"),
        bad((*solve, f("empty.txt", "# no edges\n"), "--policy", "kl"), "empty.txt", "no edges"),
        bad((*solve, f("loop.txt", "0 1 1\n2 2 1\n"), "--policy", "kl"), "loop.txt:2", "self-loop"),
        bad((*solve, f("negative.txt", "-1 2 1\n"), "--policy", "kl"), "negative.txt:1", "out of range"),
        bad((*solve, f("minified.txt", "0 " * 100_000), "--policy", "kl"), "minified.txt:1", "3 fields"),
        bad((*solve, f("rect.txt", "1 2\n3 4\n5 6\n"), "--qubo", "--policy", "kl"), "rect.txt:1", "3x3"),
        bad((*solve, f("wide.txt", "0\n" * 1001), "--qubo", "--policy", "kl"), "wide.txt", "1,000 variables"),
        bad((*solve, graph, "--policy", "kl", "--out", str(tmp_path / "no" / "dir" / "o.txt")), "--out", "does not exist"),
        bad((*solve, graph, "--policy", "kl", "--out", str(tmp_path)), "--out", "folder"),
        bad((*solve, graph, "--policy", "neural", "--networks", f("garbage.pt", bytes(range(256)))), "garbage.pt", "torch.save"),
        bad((*solve, graph, "--policy", "neural", "--networks", f("text.pt", "hello\n")), "text.pt", "torch.save"),
        bad((*solve, graph, "--policy", "neural", "--networks", str(tmp_path / "absent.pt")), "--networks", "absent.pt", "no such file"),
        bad((*solve, graph, "--policy", "neural", "--networks", str(other)), "other.pt", "another kind"),
        bad((*solve, graph, "--policy", "neural", "--networks", str(old)), "old.pt", "format 1", "retrain"),
        bad((*solve, f("hundred.txt", "".join(f"{i} {(i + 1) % 100} 1\n" for i in range(100))), "--policy", "neural",
             "--networks", str(networks), "--n-max", "10"), "networks.pt", "width 8", "at most 7 parts", "--n-max 15"),
        bad((*solve, graph, "--policy", "quantum"), "--policy", "quantum"),
        bad((*solve, graph, "--policy", "kl", "--n-max", "-3"), "--n-max", "-3"),
        bad((*solve, graph, "--policy", "kl", "--n-max", "100000"), "--n-max", "2..16"),
        bad((*solve, graph, "--policy", "neural", "--tta-steps", "-1"), "--tta-steps"),
        bad((*solve, graph, "--policy", "kl", "--seed", "-1"), "--seed"),
    ], cwd=tmp_path)


def test_registered_networks_resolve(tmp_path, monkeypatch, networks):
    """`--networks NAME/1` finds version 1 (the old lookup said "has no version '1' (versions: [1])")."""
    from flows.neural_qaoa2.cli import neural_policy_for
    from tasks.core.inputs import InputError
    from tasks.core.tracking import client_for, register_model

    monkeypatch.setenv("PAPERS_ROOT", str(tmp_path))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client = client_for(tmp_path)
    run = client.create_run(client.create_experiment("neural_qaoa2", artifact_location=(tmp_path / "art").as_uri()))
    register_model(client, run.info.run_id, "neural_qaoa2-networks", networks)
    assert callable(neural_policy_for("neural_qaoa2-networks/1", 1))
    with pytest.raises(InputError, match=r"--networks: .*has no version 2 \(versions: \[1\]\).*papers run neural_qaoa2"):
        neural_policy_for("neural_qaoa2-networks/2", 1)
