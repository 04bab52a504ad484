"""A user's cloud in every supported format, and hostile files refused with one line naming the culprit."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from tasks.core.inputs import InputError
from tasks.sets.cloud_files import read_cloud


@pytest.fixture
def torus():
    return trimesh.creation.torus(major_radius=0.7, minor_radius=0.2)


@pytest.mark.parametrize("suffix", [".stl", ".obj", ".ply"])
def test_meshes_are_sampled(tmp_path, torus, suffix):
    path = tmp_path / f"mesh{suffix}"
    torus.export(path)
    points = read_cloud(path, sample=300, seed=1)
    assert points.shape == (300, 3) and np.isfinite(points).all()
    assert np.array_equal(points, read_cloud(path, sample=300, seed=1))


def test_point_formats(tmp_path):
    points = np.random.default_rng(0).normal(size=(50, 3))
    np.save(tmp_path / "c.npy", points)
    np.savetxt(tmp_path / "c.xyz", points)
    (tmp_path / "c.txt").write_text("# x, y, z, intensity\n" + "".join(f"{x},{y},{z},7\n" for x, y, z in points))
    trimesh.PointCloud(points).export(tmp_path / "c.ply")
    for name in ("c.npy", "c.xyz", "c.txt", "c.ply"):
        assert np.allclose(read_cloud(tmp_path / name), points, atol=1e-6), name


@pytest.mark.parametrize("name, content, message", [
    ("nan.xyz", "1 2 3\n1 nan 2\n", "point 1 is not finite"),
    ("word.xyz", "1 2 3\n1 x 2\n", "line 2: not a number"),
    ("short.txt", "1 2\n", "line 1: expected x y z"),
    ("empty.xyz", "# nothing\n", "no points"),
    ("binary.xyz", "1 2 3\0", "binary file"),
    ("broken.ply", "ply\nformat garbage\n", "not a readable .ply"),
    ("broken.stl", "solid x\nfacet nonsense\n", ".stl"),
    ("cloud.zip", "x", "unknown format"),
])
def test_hostile_text_files(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(InputError, match=message):
        read_cloud(tmp_path / name)


def test_hostile_arrays_and_paths(tmp_path):
    np.save(tmp_path / "wide.npy", np.zeros((4, 5)))
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    np.save(tmp_path / "inf.npy", np.array([[0.0, np.inf, 1.0]]))
    (tmp_path / "fake.npy").write_bytes(b"not an array")
    for name, message in (("wide.npy", r"\[n, 3\]"), ("objects.npy", "npy"), ("inf.npy", "not finite"),
                          ("fake.npy", "not a readable .npy"), ("missing.npy", "no such file")):
        with pytest.raises(InputError, match=message):
            read_cloud(tmp_path / name)
    with pytest.raises(InputError, match="--sample"):
        read_cloud(tmp_path / "wide.npy", sample=0)
