"""`papers unidrag cfd` and `papers unidrag` on hostile input: one line naming the culprit, exit 2, no traceback, no allocation
blind (tests/cli_table.py). The unidrag table runs from tmp_path, outside the checkout: defaults (the surrogate's
path) must come from the project `papers` found, not from the working folder.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.cli_table import Row, bad, check_rows, ok, write
from tests.conftest import stage_env


@pytest.fixture(scope="module")
def surrogate(tmp_path_factory) -> Path:
    """A tiny untrained UniDrag surrogate, saved as `papers run unidrag` saves one."""
    from flows.unidrag.surrogates import build_model
    from tasks.cfd.surrogate.samples import Standardizer
    from tasks.cfd.surrogate.training import TrainConfig, TrainedSurrogate

    config = TrainConfig(kind="unidrag", mpl=True, d=8, blocks=1, heads=1, slices=2, experts=1, top_k=1,
                         surface_points=16, volume_points=16, profile_bins=4)
    standardizer = Standardizer(0.3, 0.1, np.zeros(4), 0.1, 0.0, 1.0, np.zeros(3), np.ones(3))
    return TrainedSurrogate(config, build_model(config).eval(), standardizer).save(
        tmp_path_factory.mktemp("models") / "surrogate.pt")


def binary_stl(path: Path, triangles: np.ndarray) -> str:
    """triangles [F, 3, 3] as a binary STL (normals zero)."""
    records = np.zeros(len(triangles), dtype=[("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attr", "<u2")])
    records["vertices"] = triangles
    path.write_bytes(b"\0" * 80 + struct.pack("<I", len(triangles)) + records.tobytes())
    return str(path)


def test_cfd_cases(tmp_path):
    check_rows([
        ok("unidrag", "cfd", "cylinder", "--help"),
        ok("unidrag", "cfd", "sphere", "--help"),
        ok("unidrag", "cfd", "cylinder", "--diameter-cells", "4", "--steps", "20", "--device", "cpu", "--json"),
        ok("unidrag", "cfd", "sphere", "--diameter-cells", "4", "--steps", "10", "--device", "cpu", "--json"),
        bad(("unidrag", "cfd", "cylinder", "--diameter-cells", "100000"), "--diameter-cells", "16,000,000 cells"),
        bad(("unidrag", "cfd", "cylinder", "--diameter-cells", "9" * 30), "--diameter-cells", "16,000,000 cells"),
        bad(("unidrag", "cfd", "sphere", "--diameter-cells", "40"), "--diameter-cells", "27,648,000", "16,000,000 cells"),
        bad(("unidrag", "cfd", "cylinder", "--diameter-cells", "-3"), "--diameter-cells", "-3"),
        bad(("unidrag", "cfd", "cylinder", "--steps", "-5"), "--steps", "-5"),
        bad(("unidrag", "cfd", "sphere", "--steps", "1000000000000"), "--steps", "10,000,000"),
        bad(("unidrag", "cfd", "cylinder", "--re", "nan"), "--re", "nan"),
        bad(("unidrag", "cfd", "sphere", "--re", "-1"), "--re"),
        bad(("unidrag", "cfd", "cylinder", "--u-max", "5"), "--u-max"),
        bad(("unidrag", "cfd", "cylinder", "--device", "tpu"), "--device", "tpu"),
        bad(("unidrag", "cfd", "cylinder", "--collision", "mrt"), "--collision", "mrt"),
        bad(("unidrag", "cfd", "cylinder", "--engine", "fortran"), "--engine", "fortran"),
        bad(("unidrag", "cfd", "cylinder", "--engine", "cuda", "--device", "cpu"), "engine: 'cuda' needs a CUDA device"),
    ])


@pytest.fixture(scope="module")
def vehicle_stl(tmp_path_factory) -> Path:
    from tasks.cfd.vehicles import export_stl, sample_family

    mesh = sample_family(4, 0)[2].mesh()
    mesh.apply_scale(4630.0)  # millimetres
    return export_stl(mesh, tmp_path_factory.mktemp("meshes") / "car.stl")


@pytest.mark.heavy  # a child process that imports torch and optimizes a shape: ~6-9 s
def test_unidrag_predict_and_optimize(tmp_path, surrogate, vehicle_stl):
    import trimesh

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
    torch.save({"weights": {}}, other := tmp_path / "other.pt")  # a torch file of another kind
    check_rows([
        ok(*predict, "--help"),
        ok(*optimize, "--help"),
        ok(*predict, car, *model, "--json"),
        ok(*optimize, car, *model, "--steps", "1", "--transformations", "1", "--out", str(tmp_path / "car_opt.stl")),
        bad((*predict, car, "--model", f("garbage.pt", bytes(range(256)))), "garbage.pt", "torch.save"),
        bad((*predict, car, "--model", f("notes.pt", "not a model\n")), "notes.pt", "torch.save"),
        bad((*predict, car, "--model", str(other)), "other.pt", "another kind"),
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


@pytest.mark.heavy  # two children that import torch: ~5 s
def test_without_model_a_clone_uses_its_committed_default(tmp_path, surrogate, vehicle_stl):
    from tasks.core.default_models import write_default_models

    predict = ("unidrag", "predict", str(vehicle_stl))
    check_rows([bad(predict, "--model", "unidrag-surrogate", "no committed default", "papers run unidrag")],
               cwd=tmp_path, env=stage_env(tmp_path))
    write_default_models(tmp_path / "data" / "unidrag" / "default_models", "unidrag",
                         {"unidrag-surrogate": surrogate}, "default", "d" * 40, False, "run")
    check_rows([Row(predict, 0, ("the committed default unidrag-surrogate", "commit dddddddddd"))],
               cwd=tmp_path, env=stage_env(tmp_path))
