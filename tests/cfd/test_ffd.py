"""FFD and constraint measures (spec §3.4, §10 Geometry/FFD): identity at dP = 0, Bernstein
partition of unity, translation, the displacement bound, the fixed-point inverse, voxelisation by
inverse + analytic inside vs point-in-polygon on the deformed contour, gradchecks, projections."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from shapely import Point, Polygon, contains_xy

from tasks.cfd.constraints import constraints_hold, displacement, mesh_volume, polygon_area, project_controls
from tasks.cfd.engines import run_lbm
from tasks.cfd.ffd import ControlLattice, DeformedInside, bernstein, deform, invert, lattice_around, weight_matrix
from tasks.cfd.lbm_setup import LBMSetup
from tasks.cfd.vehicle_dataset import Placement, tunnel_body
from tasks.cfd.vehicles import ahmed_body, sample_family, sample_vehicle


def contour_tensor(vehicle, n=400):
    points, _ = vehicle.contour(n)
    return torch.as_tensor(points)


def random_controls(lattice, scale, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return scale * (2 * torch.rand(lattice.size, lattice.dim, generator=generator, dtype=torch.float64) - 1)


def test_bernstein_is_a_nonnegative_partition_of_unity():
    t = torch.linspace(0, 1, 101, dtype=torch.float64)
    for degree in (1, 3, 7):
        weights = bernstein(degree, t)
        assert weights.min() >= 0
        torch.testing.assert_close(weights.sum(-1), torch.ones_like(t), rtol=0, atol=1e-14)
    # B_1^3(t) = 3 t (1 - t)^2
    torch.testing.assert_close(bernstein(3, t)[:, 1], 3 * t * (1 - t) ** 2)


@pytest.mark.parametrize("dim", [2, 3])
def test_phi_rows_sum_to_one_identity_translation_and_bound(dim):
    rng = np.random.default_rng(1)
    points = torch.as_tensor(rng.uniform(-0.2, 1.2, (500, dim)))  # some outside the box: clamped
    lattice = lattice_around(points[:300])
    phi = weight_matrix(lattice, points)
    assert phi.shape == (500, lattice.size) and lattice.size == (32 if dim == 2 else 128)
    assert phi.min() >= 0
    torch.testing.assert_close(phi.sum(1), torch.ones(500, dtype=torch.float64), rtol=0, atol=1e-13)
    assert torch.equal(deform(points, phi, torch.zeros(lattice.size, dim, dtype=torch.float64)), points)
    v = torch.tensor([0.03, -0.01, 0.02][:dim], dtype=torch.float64)
    torch.testing.assert_close(deform(points, phi, v.expand(lattice.size, dim)), points + v, rtol=0, atol=1e-14)
    dP = random_controls(lattice, 0.05)
    moved = (deform(points, phi, dP) - points).norm(dim=1)
    assert moved.max() <= dP.norm(dim=1).max() + 1e-12


def test_default_lattice_is_the_enlarged_bounding_box():
    points = contour_tensor(sample_vehicle("fastback", np.random.default_rng(0)))
    lattice = lattice_around(points)
    assert lattice.counts == (8, 4)
    lo, hi = points.min(0).values, points.max(0).values
    np.testing.assert_allclose(np.subtract(lattice.upper, lattice.lower), (1.05 * (hi - lo)).numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="counts"):
        ControlLattice((0.0, 0.0), (1.0, 1.0), (8, 1))


def test_inverse_recovers_the_original_points():
    points = contour_tensor(sample_vehicle("notchback", np.random.default_rng(2)))
    lattice = lattice_around(points)
    dP = random_controls(lattice, 0.03, seed=3)
    deformed = deform(points, weight_matrix(lattice, points), dP)
    recovered = invert(deformed, lattice, dP)
    assert (recovered - points).abs().max() <= 1e-6  # units of L = 1


def test_voxelisation_by_inverse_matches_point_in_polygon_on_the_deformed_contour():
    vehicle = sample_vehicle("pickup", np.random.default_rng(4))
    points = contour_tensor(vehicle, 2000)
    lattice = lattice_around(points)
    dP = project_controls(random_controls(lattice, 0.05, seed=5), lattice, 0.05)
    deformed = deform(points, weight_matrix(lattice, points), dP).numpy()
    cell = 1 / 48  # nodes of a grid with L = 48 cells over the body's neighbourhood
    x, z = np.meshgrid(np.arange(-0.1, 1.1, cell), np.arange(0.0, 0.5, cell), indexing="ij")
    nodes = np.stack([x.ravel(), z.ravel()], 1)
    by_inverse = DeformedInside(vehicle.inside, lattice, dP)(nodes)
    by_polygon = contains_xy(Polygon(deformed), nodes[:, 0], nodes[:, 1])
    differ = by_inverse != by_polygon
    assert by_inverse.sum() > 300 and differ.mean() <= 0.005
    distance = Polygon(deformed).exterior.distance  # differences only next to the surface
    assert all(distance(Point(p)) < 0.5 * cell for p in nodes[differ])


def test_zero_deformation_leaves_the_mask_bit_identical():
    vehicle = ahmed_body(25)
    points = contour_tensor(vehicle)
    lattice = lattice_around(points)
    nodes = np.random.default_rng(6).uniform(-0.1, 1.1, (5000, 2)) * [1, 0.4]
    mask = DeformedInside(vehicle.inside, lattice, torch.zeros(lattice.size, 2, dtype=torch.float64))(nodes)
    assert np.array_equal(mask, vehicle.inside(nodes))


def test_zero_deformation_leaves_the_lbm_result_bit_identical():
    vehicle = sample_vehicle("fastback", np.random.default_rng(10))
    points = contour_tensor(vehicle)
    lattice = lattice_around(points)
    deformed = DeformedInside(vehicle.inside, lattice, torch.zeros(lattice.size, 2, dtype=torch.float64))
    placement = Placement(length_cells=8, x_front=8.0)
    setup = LBMSetup(grid=(40, 17), tau=0.6, steps=60, average_steps=20, ramp_steps=20, bounce_back="bouzidi")
    base = run_lbm(setup, [tunnel_body(vehicle, placement)])
    moved = run_lbm(setup, [tunnel_body(vehicle, placement, inside=deformed)])
    assert base.solid.sum() > 10 and np.array_equal(base.solid, moved.solid)
    assert np.array_equal(base.coefficient_trace, moved.coefficient_trace)
    assert np.array_equal(base.rho_mean, moved.rho_mean) and np.array_equal(base.drag_profile, moved.drag_profile)


def test_area_and_volume_are_right_and_differentiable():
    square = torch.tensor([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [0.0, 1.0]], dtype=torch.float64)
    assert polygon_area(square).item() == 2.0 and polygon_area(square.flip(0)).item() == -2.0
    vehicle = sample_family(1, 0)[0]
    mesh = vehicle.mesh(16, 16)
    vertices, faces = torch.as_tensor(mesh.vertices), torch.as_tensor(mesh.faces)
    assert mesh_volume(vertices, faces).item() == pytest.approx(mesh.volume, rel=1e-12)
    contour = contour_tensor(vehicle, 64).requires_grad_()
    assert torch.autograd.gradcheck(polygon_area, (contour,))
    assert torch.autograd.gradcheck(lambda v: mesh_volume(v, faces), (vertices.clone().requires_grad_(),))
    # differentiable through the FFD: d area / d dP exists and is finite
    lattice = lattice_around(contour.detach())
    dP = torch.zeros(lattice.size, 2, dtype=torch.float64, requires_grad=True)
    polygon_area(deform(contour.detach(), weight_matrix(lattice, contour.detach()), dP)).backward()
    assert torch.isfinite(dP.grad).all() and dP.grad.abs().sum() > 0


def test_displacement_and_projection_onto_c1_c3():
    vehicle = sample_vehicle("estateback", np.random.default_rng(7))
    points = contour_tensor(vehicle)
    lattice = lattice_around(points)
    dP = project_controls(random_controls(lattice, 0.2, seed=8), lattice, delta_max=0.05)
    assert constraints_hold(dP, lattice, 0.05)
    assert dP.norm(dim=1).max() <= 0.05 + 1e-12 and dP.norm(dim=1).max() > 0.04
    assert not constraints_hold(random_controls(lattice, 0.2), lattice, 0.05)
    deformed = deform(points, weight_matrix(lattice, points), dP)
    moved = displacement(points, deformed)
    assert 0 < moved["mean"] <= moved["max"] <= 0.05 + 1e-12
    # C2: x-components frozen, so no point moves streamwise
    assert (deformed[:, 0] - points[:, 0]).abs().max() <= 1e-12
    with pytest.raises(ValueError, match="delta_max"):
        project_controls(dP, lattice, -1.0)
