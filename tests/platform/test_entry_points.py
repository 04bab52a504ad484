"""Bad inputs at the user-facing commands: one line naming the culprit, exit 2, no traceback, no
allocation blind (the table runs under the 6 GB address-space limit of tests/cli_table.py).

One table per command group, each in one child process; every file is made in tmp_path. The
qaoa2 and unidrag tables run from tmp_path, outside the checkout: defaults (the surrogate's path)
must come from the project `papers` found, not from the working folder. Rows that would look a
model up in the MLflow registry are left out: the child's PAPERS_ROOT is the checkout, whose
store a test must not write (test_registered_networks_resolve covers the lookup in-process).
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from tests.cli_table import Row, check_rows
from tests.conftest import ROOT

INFO = " ".join("1" if c == r else "0" for r in range(6) for c in range(r, 6))  # 21 entries of an identity


def ok(*args: str) -> Row:
    return Row(tuple(args), code=0)


def bad(args: tuple[str, ...], *names: str) -> Row:
    return Row(tuple(args), code=2, names=names)


@pytest.fixture(scope="module")
def networks(tmp_path_factory) -> Path:
    """A tiny pair of QAOA^2 networks, untrained: enough for the neural policy to run."""
    from tasks.quantum.critic import Critic
    from tasks.quantum.generator import JointGenerator, save_networks

    path = tmp_path_factory.mktemp("models") / "networks.pt"
    save_networks(path, Critic(width=8, layers=1), JointGenerator(width=8, layers=1), {"tiny": True})
    return path


@pytest.fixture(scope="module")
def surrogate(tmp_path_factory) -> Path:
    """A tiny untrained UniDrag surrogate, saved as `papers run unidrag` saves one."""
    from tasks.cfd.surrogate.dataset import Standardizer
    from tasks.cfd.surrogate.training import TrainConfig, TrainedSurrogate, build_model

    config = TrainConfig(d=8, blocks=1, heads=1, slices=2, experts=1, top_k=1, surface_points=16, volume_points=16,
                         profile_bins=4)
    standardizer = Standardizer(0.3, 0.1, np.zeros(4), 0.1, 0.0, 1.0, np.zeros(3), np.ones(3))
    return TrainedSurrogate(config, build_model(config).eval(), standardizer).save(
        tmp_path_factory.mktemp("models") / "surrogate.pt")


def write(path: Path, text: str | bytes) -> str:
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def binary_stl(path: Path, triangles: np.ndarray) -> str:
    """triangles [F, 3, 3] as a binary STL (normals zero)."""
    records = np.zeros(len(triangles), dtype=[("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attr", "<u2")])
    records["vertices"] = triangles
    path.write_bytes(b"\0" * 80 + struct.pack("<I", len(triangles)) + records.tobytes())
    return str(path)


def test_qaoa2_solve(tmp_path, networks, surrogate):
    graph = write(tmp_path / "ring.txt", "# u v w\n0 1 1\n1 2 2\n2 3 1\n3 0 1\n0 2 -1\n")
    f = lambda name, text: write(tmp_path / name, text)  # noqa: E731
    solve = ("qaoa2", "solve")
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
        bad((*solve, graph, "--policy", "neural", "--networks", str(surrogate)), "surrogate.pt", "another kind"),
        bad((*solve, graph, "--policy", "quantum"), "--policy", "quantum"),
        bad((*solve, graph, "--policy", "kl", "--n-max", "-3"), "--n-max", "-3"),
        bad((*solve, graph, "--policy", "kl", "--n-max", "100000"), "--n-max", "2..16"),
        bad((*solve, graph, "--policy", "neural", "--tta-steps", "-1"), "--tta-steps"),
        bad((*solve, graph, "--policy", "kl", "--seed", "-1"), "--seed"),
    ], cwd=tmp_path)


def g2o_lines(x: str = "1", q: str = "0 0 0 1") -> list[str]:
    vertices = ["VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1", f"VERTEX_SE3:QUAT 1 {x} 0 0 {q}", "VERTEX_SE3:QUAT 2 2 0 0 0 0 0 1"]
    return vertices + [f"EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 {INFO}", f"EDGE_SE3:QUAT 1 2 1 0 0 0 0 0 1 {INFO}"]


def test_se3_sync_solve(tmp_path):
    graph = write(tmp_path / "in.g2o", "\n".join(g2o_lines()) + "\n")
    f = lambda name, lines: write(tmp_path / name, "\n".join(lines) + "\n")  # noqa: E731
    solve = ("se3-sync", "solve", "--g2o")
    out = ("--out", str(tmp_path / "out.g2o"))
    check_rows([
        ok("se3-sync", "solve", "--help"),
        ok(*solve, graph, *out, "--method", "chain"),
        bad((*solve, f("far.g2o", g2o_lines(x="1e300")), *out), "far.g2o", "line 2", "1e300", "1e+09"),
        bad((*solve, f("nan.g2o", g2o_lines(x="nan")), *out), "nan.g2o", "line 2", "non-finite"),
        bad((*solve, f("quat.g2o", g2o_lines(q="1e200 0 0 1")), *out), "quat.g2o", "qx"),
        bad((*solve, write(tmp_path / "blob.g2o", bytes(range(256)) * 4), *out), "blob.g2o", "binary"),
        bad((*solve, str(tmp_path / "missing.g2o"), *out), "missing.g2o", "no such file"),
        bad((*solve, f("empty.g2o", ["# nothing"]), *out), "empty.g2o", "no VERTEX_SE3:QUAT"),
        bad((*solve, graph, "--out", str(tmp_path / "no" / "dir" / "o.g2o")), "--out", "does not exist"),
        bad((*solve, graph, *out, "--method", "sdp"), "--method", "sdp"),
    ])
    assert not (tmp_path / "no").exists()


def test_cfd_cases(tmp_path):
    check_rows([
        ok("cfd", "cylinder", "--help"),
        ok("cfd", "sphere", "--help"),
        ok("cfd", "cylinder", "--diameter-cells", "4", "--steps", "20", "--device", "cpu", "--json"),
        ok("cfd", "sphere", "--diameter-cells", "4", "--steps", "10", "--device", "cpu", "--json"),
        bad(("cfd", "cylinder", "--diameter-cells", "100000"), "--diameter-cells", "16,000,000 cells"),
        bad(("cfd", "cylinder", "--diameter-cells", "9" * 30), "--diameter-cells", "16,000,000 cells"),
        bad(("cfd", "sphere", "--diameter-cells", "40"), "--diameter-cells", "27,648,000", "16,000,000 cells"),
        bad(("cfd", "cylinder", "--diameter-cells", "-3"), "--diameter-cells", "-3"),
        bad(("cfd", "cylinder", "--steps", "-5"), "--steps", "-5"),
        bad(("cfd", "sphere", "--steps", "1000000000000"), "--steps", "10,000,000"),
        bad(("cfd", "cylinder", "--re", "nan"), "--re", "nan"),
        bad(("cfd", "sphere", "--re", "-1"), "--re"),
        bad(("cfd", "cylinder", "--u-max", "5"), "--u-max"),
        bad(("cfd", "cylinder", "--device", "tpu"), "--device", "tpu"),
        bad(("cfd", "cylinder", "--collision", "mrt"), "--collision", "mrt"),
        bad(("cfd", "cylinder", "--engine", "fortran"), "--engine", "fortran"),
        bad(("cfd", "cylinder", "--engine", "cuda", "--device", "cpu"), "engine: 'cuda' needs a CUDA device"),
    ])


@pytest.fixture(scope="module")
def vehicle_stl(tmp_path_factory) -> Path:
    from tasks.cfd.vehicles import export_stl, sample_family

    mesh = sample_family(4, 0)[2].mesh()
    mesh.apply_scale(4630.0)  # millimetres
    return export_stl(mesh, tmp_path_factory.mktemp("meshes") / "car.stl")


def test_unidrag_predict_and_optimize(tmp_path, surrogate, networks, vehicle_stl):
    import trimesh

    from flows.unidrag.cli import DEFAULT_MODEL

    car, model = str(vehicle_stl), ("--model", str(surrogate))
    box = trimesh.creation.box().triangles
    with_nan = box.copy()
    with_nan[0, 0, 0] = np.nan
    many = tmp_path / "many.stl"  # a binary STL declaring 2M triangles, sparse on disk
    with many.open("wb") as handle:
        handle.write(b"\0" * 80 + struct.pack("<I", 2_000_000))
        handle.truncate(84 + 50 * 2_000_000)
    f = lambda name, data: write(tmp_path / name, data)  # noqa: E731
    predict, optimize = ("unidrag", "predict"), ("unidrag", "optimize")
    default_model = ROOT / DEFAULT_MODEL  # the checkout's, though the table runs elsewhere
    check_rows([
        ok(*predict, car) if default_model.is_file() else
        bad((*predict, car), "--model", str(default_model), "papers run unidrag"),
        ok(*predict, "--help"),
        ok(*optimize, "--help"),
        ok(*predict, car, *model, "--json"),
        ok(*optimize, car, *model, "--steps", "1", "--transformations", "1", "--out", str(tmp_path / "car_opt.stl")),
        bad((*predict, car, "--model", f("garbage.pt", bytes(range(256)))), "garbage.pt", "torch.save"),
        bad((*predict, car, "--model", f("notes.pt", "not a model\n")), "notes.pt", "torch.save"),
        bad((*predict, car, "--model", str(networks)), "networks.pt", "another kind"),
        bad((*predict, car, "--model", str(tmp_path / "absent.pt")), "--model", "absent.pt", "no such file"),
        bad((*predict, f("text.stl", "hello\nnot a mesh\n"), *model), "text.stl", "no surface mesh"),
        bad((*predict, f("empty.stl", b""), *model), "empty.stl", "no surface mesh"),
        bad((*predict, f("blob.stl", bytes(range(256)) * 12), *model), "blob.stl"),
        bad((*predict, binary_stl(tmp_path / "nan.stl", with_nan), *model), "nan.stl", "non-finite"),
        bad((*predict, binary_stl(tmp_path / "far.stl", box * 1e30), *model), "far.stl", "1e+09"),
        bad((*predict, str(many), *model), "many.stl", "2,000,000 triangles", "1,000,000"),
        bad((*predict, binary_stl(tmp_path / "open.stl", box[:-2]), *model), "open.stl", "not watertight"),
        bad((*predict, str(tmp_path / "missing.stl"), *model), "missing.stl", "no such file"),
        bad((*predict, car, *model, "--seed", "-1"), "--seed"),
        bad((*optimize, car, *model, "--out", str(tmp_path / "no" / "dir" / "o.stl")), "--out", "does not exist"),
        bad((*optimize, car, *model, "--out", str(tmp_path / "o.xyz")), "--out", ".xyz"),
        bad((*optimize, car, *model, "--out", car), "--out", "input mesh"),
        bad((*optimize, car, *model, "--steps", "-1"), "--steps", "-1"),
        bad((*optimize, car, *model, "--transformations", "100000"), "--transformations"),
        bad((*optimize, car, *model, "--max-displacement", "inf"), "--max-displacement"),
        bad((*optimize, car, *model, "--method", "annealing"), "--method", "annealing"),
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
