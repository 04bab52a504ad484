"""A user's mesh: loading with clear errors (missing, not watertight, degenerate), the vehicle frame
(length 1, nose at x = 0, y-centred, the road rule), the mid-plane silhouette against the generator's
exact contour, and the 2D FFD applied to the 3D vertices."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import trimesh
from shapely import Polygon

from tasks.cfd.constraints import project_controls
from tasks.cfd.ffd import deform, lattice_around, weight_matrix
from tasks.cfd.user_mesh import MEDIAN_CLEARANCE, MeshError, deform_mesh, load_mesh, read_user_shape
from tasks.cfd.vehicles import export_stl, sample_family


@pytest.fixture(scope="module")
def vehicle():
    # A shape whose rounded nose keeps a finite height: where the rounding closes the nose section
    # to a line (r_n >= half the nose thickness, e.g. sample_family(4, 0)[0]), the STL round trip
    # merges that section's vertices and the mesh is no longer manifold (a part-1 mesh issue).
    return sample_family(4, 0)[2]


def scaled_copy(mesh, scale, offset):
    moved = mesh.copy()
    moved.apply_scale(scale)
    moved.apply_translation(offset)
    return moved


def test_a_generated_vehicle_maps_back_onto_its_own_frame_and_silhouette(vehicle, tmp_path):
    # in millimetres, lateral offset, above its own z = 0 plane: the frame undoes all of it
    path = export_stl(scaled_copy(vehicle.mesh(), 4630.0, [250.0, 80.0, 0.0]), tmp_path / "car.stl")
    shape = read_user_shape(path, contour_points=400)
    low, high = shape.mesh.bounds
    np.testing.assert_allclose([low[0], high[0], (low[1] + high[1]) / 2], [0, 1, 0], atol=1e-9)
    assert shape.road_rule == "mesh z = 0 plane" and shape.scale == pytest.approx(1 / 4630)
    exact, _ = vehicle.contour(400)
    ours, theirs = Polygon(shape.contour), Polygon(exact)
    assert ours.exterior.is_ccw and ours.area == pytest.approx(theirs.area, rel=0.01)
    assert ours.symmetric_difference(theirs).area < 0.02 * theirs.area  # the loft's 48 stations
    assert shape.a_ref == pytest.approx(vehicle.h_ref, rel=0.01)
    np.testing.assert_allclose(shape.to_original(shape.mesh.vertices), path_vertices(path), atol=1e-6 * 4630)


def path_vertices(path):
    return trimesh.load(path, force="mesh", process=True).vertices


def test_a_mesh_below_its_z0_plane_gets_the_median_clearance(vehicle, tmp_path):
    path = export_stl(scaled_copy(vehicle.mesh(), 2.0, [0.0, 0.0, -0.5]), tmp_path / "low.stl")
    shape = read_user_shape(path)
    assert shape.mesh.bounds[0][2] == pytest.approx(MEDIAN_CLEARANCE)
    assert shape.road_rule.startswith("lowest point")


def test_unusable_files_raise_a_clear_error(vehicle, tmp_path):
    with pytest.raises(MeshError, match="no such file"):
        load_mesh(tmp_path / "missing.stl")
    broken = vehicle.mesh()
    open_mesh = trimesh.Trimesh(broken.vertices, broken.faces[:-5], process=False)
    with pytest.raises(MeshError, match="not watertight"):
        load_mesh(export_stl(open_mesh, tmp_path / "open.stl"))
    garbage = tmp_path / "garbage.stl"
    garbage.write_text("solid nothing\nendsolid nothing\n")
    with pytest.raises(MeshError, match="garbage.stl"):
        load_mesh(garbage)


def test_the_2d_deformation_moves_every_vertex_like_the_silhouette(vehicle):
    mesh = vehicle.mesh(24, 24)
    contour = torch.as_tensor(vehicle.contour(300)[0])
    lattice = lattice_around(contour)
    generator = torch.Generator().manual_seed(0)
    dP = project_controls(torch.rand(lattice.size, 2, generator=generator, dtype=torch.float64) - 0.5, lattice, 0.05)
    moved = deform_mesh(mesh, lattice, dP)
    shift = moved.vertices - mesh.vertices
    assert np.abs(shift[:, [0, 1]]).max() <= 1e-15  # no streamwise (C2) and no lateral motion
    assert np.linalg.norm(shift, axis=1).max() <= 0.05 + 1e-12 and np.abs(shift).max() > 0.01
    section = torch.as_tensor(mesh.vertices[:, [0, 2]])
    np.testing.assert_allclose(shift[:, 2], (deform(section, weight_matrix(lattice, section), dP) - section)[:, 1])
    assert moved.is_watertight and moved.volume > 0
