"""The fused numba solver against the torch reference: same forces, profiles and fields."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from tasks.cfd import faces
from tasks.cfd import fused_boundaries as bc
from tasks.cfd.engines import engine_of, run_lbm
from tasks.cfd.fused import PaddedLayout, face_column, node_runs
from tasks.cfd.fused_kernel import coefficient_slots, coefficients, kernel_source
from tasks.cfd.kernels import collision_matrices
from tasks.cfd.lattice import get_lattice
from tasks.cfd.lbm_setup import Body, LBMSetup, validate_setup
from tasks.cfd.validation import Disc
from tasks.core.device import single_torch_thread


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    single_torch_thread()  # the torch reference on 2 shared cores: more threads only contend


def both_engines(setup: LBMSetup, bodies: list[Body]):
    return run_lbm(replace(setup, engine="torch"), bodies), run_lbm(replace(setup, engine="numba"), bodies)


def assert_same_run(reference, fused, cd_tolerance: float):
    assert not reference.diverged.any() and not fused.diverged.any()
    np.testing.assert_allclose(fused.cd, reference.cd, rtol=cd_tolerance)
    np.testing.assert_allclose(fused.coefficient_trace, reference.coefficient_trace, atol=1e-3)  # float32 rounding
    np.testing.assert_allclose(fused.drag_profile, reference.drag_profile, atol=1e-3)
    fluid = ~reference.solid
    np.testing.assert_allclose(fused.rho_mean[fluid], reference.rho_mean[fluid], atol=1e-5)
    velocity = lambda result: np.moveaxis(result.u_mean, 1, 0)[:, fluid]  # [D, fluid nodes]
    np.testing.assert_allclose(velocity(fused), velocity(reference), atol=1e-5)


@pytest.mark.parametrize("bounce_back", [pytest.param("halfway", marks=pytest.mark.heavy), "bouzidi"])  # halfway: unit tier below
def test_fused_solver_reproduces_the_torch_solver_over_thousands_of_steps(bounce_back):
    """The data set's setup (moving ground, free-stream top, ramp), two bodies in a batch, 2000 steps."""
    setup = LBMSetup(grid=(64, 30), nu=0.04, u_lat=0.08, steps=2000, average_steps=500, ramp_steps=200,
                     bounce_back=bounce_back)
    bodies = [Body(Disc((20.0, 10.3), 8.0), 8.0), Body(Disc((24.2, 12.0), 6.5), 6.5)]
    reference, fused = both_engines(setup, bodies)
    assert_same_run(reference, fused, cd_tolerance=1e-4)


@pytest.mark.parametrize("setup", [
    LBMSetup(grid=(48, 22), nu=0.05, u_lat=0.05, steps=400, average_steps=100, ramp_steps=100, bounce_back="bouzidi",
             collision="trt", ground="wall", top="wall", inflow="parabolic"),
    LBMSetup(grid=(48, 22), nu=0.05, u_lat=0.05, steps=400, average_steps=100, ramp_steps=100,
             collision="regularized", ground="none", dtype="float64"),
    LBMSetup(lattice="D3Q19", grid=(24, 12, 12), nu=0.05, u_lat=0.05, steps=150, average_steps=50, ramp_steps=50,
             bounce_back="bouzidi"),
], ids=["channel-trt", "regularized-float64-no-ground", "d3q19"])
def test_fused_solver_covers_every_face_collision_and_lattice(setup):
    centre = tuple(n / 3 if a == 0 else n / 2 - 0.3 for a, n in enumerate(setup.grid))
    reference, fused = both_engines(setup, [Body(Disc(centre, 5.0), 5.0)])
    assert_same_run(reference, fused, cd_tolerance=1e-5)


def test_auto_engine_is_numba_on_the_cpu_and_numba_refuses_a_gpu():
    assert engine_of(LBMSetup(nu=0.05, device="cpu")) == "numba"
    assert engine_of(LBMSetup(nu=0.05, engine="torch")) == "torch"
    with pytest.raises(ValueError, match="engine"):
        validate_setup(LBMSetup(nu=0.05, engine="fortran"))


def test_generated_kernel_skips_the_zero_coefficients():
    """BGK on D2Q9: the rest population has no momentum term, diagonals have no mixed j_x j_z."""
    source = kernel_source("D2Q9", "bgk", averaging=False)
    rest_line = next(line for line in source.splitlines() if line.strip().startswith("dst0[n]"))
    assert "j0" not in rest_line and "j1" not in rest_line and "p01" not in rest_line
    assert "rs[n] += rho" in kernel_source("D2Q9", "bgk", averaging=True)


@pytest.mark.parametrize("lattice_name", ["D2Q9", "D3Q19"])
@pytest.mark.parametrize("collision", ["bgk", "trt", "regularized"])
def test_shared_coefficient_slots_rebuild_the_collision_matrices_at_any_rate(lattice_name, collision):
    """Entries that share a slot are equal at every rate, not only at the probe rates (0.83 is none)."""
    omega, lattice = 0.83, get_lattice(lattice_name)
    slots, values = coefficient_slots(lattice_name, collision), coefficients(lattice_name, collision, omega, np.float64)
    a, b = collision_matrices(lattice, omega, collision)
    rebuilt_b = np.zeros_like(b)
    for (i, m), slot in slots.b.items():
        rebuilt_b[i, m] = values[slot]
    np.testing.assert_allclose(rebuilt_b, b, atol=1e-13)
    if slots.a is None:
        assert values[0] == pytest.approx(a)
    else:
        rebuilt_a = np.zeros_like(a)
        for (i, j), slot in slots.a.items():
            rebuilt_a[i, j] = values[slot]
        np.testing.assert_allclose(rebuilt_a, a, atol=1e-13)
    assert values[-1] == 1.0 and len(values) == slots.count + 1
    if lattice_name == "D3Q19" and collision == "bgk":
        assert slots.count == 12  # BGK's scalar A and 11 distinct values of B's 118 non-zero entries


def test_node_runs_are_the_maximal_stretches_of_consecutive_positions():
    np.testing.assert_array_equal(node_runs(np.array([9, 3, 20, 4, 10, 5])), [[3, 6], [9, 11], [20, 21]])
    assert node_runs(np.zeros(0, dtype=np.int64)).shape == (0, 2)


@pytest.mark.parametrize("x_innermost", [False, True])
def test_padded_layout_offsets_reach_each_neighbour_in_either_memory_order(x_innermost):
    lattice, grid = get_lattice("D3Q19"), (5, 4, 3)
    layout = PaddedLayout.build(lattice, 2, grid, x_innermost=x_innermost)
    position = layout.position
    assert np.unique(position).size == position.size and position.max() < layout.size
    for i, velocity in enumerate(lattice.c):
        inner = tuple(slice(max(0, -v), n - max(0, v)) for v, n in zip(velocity, grid))
        shifted = tuple(slice(max(0, v), n + min(0, v)) for v, n in zip(velocity, grid))
        np.testing.assert_array_equal(position[(slice(None), *inner)] + layout.offsets[i], position[(slice(None), *shifted)])
    contiguous = np.diff(position, axis=1 if x_innermost else -1)
    assert (contiguous == 1).all()  # x (or z) rows are contiguous


def test_face_conditions_on_runs_and_columns_match_the_torch_faces():
    """One call of each numba face condition on random populations in the solver's x-contiguous layout, against
    tasks/cfd/faces.py on the same populations as [Q, B, *grid] tensors (the torch solver's code), in run_torch's
    order: moving ground, free-stream top, sides, inlet, outlet, reset of dead nodes."""
    lattice, grid, speed = get_lattice("D3Q19"), (7, 5, 6), 0.05
    layout = PaddedLayout.build(lattice, 2, grid, x_innermost=True)
    position, offsets, q = layout.position, layout.offsets, lattice.q
    rng = np.random.default_rng(0)
    f, g = ((lattice.w[:, None] * rng.uniform(0.7, 1.3, (q, layout.size))).astype(np.float32) for _ in range(2))
    post = torch.from_numpy(np.stack([g[i, position + offsets[i]] for i in range(q)]))  # f_i*(x), where the push put it
    new = torch.from_numpy(g[:, position])
    c, w = lattice.c.astype(np.float64), lattice.w.astype(np.float64)
    down = np.flatnonzero(lattice.c[:, -1] == -1)
    free_stream = torch.tensor([speed, 0.0, 0.0], dtype=torch.float32).view(3, 1, 1, 1)

    bc.wall_row(f, g, node_runs(position[..., 1]), down, lattice.opposite.astype(np.int64), offsets, w, c, speed)
    faces.wall_row(post, new, lattice, True, speed, torch.from_numpy(f[:, position[..., 1]]).sum(0))
    bc.free_stream_face(g, node_runs(position[..., -1]), speed, c, w)
    faces.set_equilibrium(new, lattice, 2, grid[-1] - 1, free_stream)
    bc.free_stream_face(g, node_runs(layout.side_nodes()), speed, c, w)
    for side in (0, grid[1] - 1):
        faces.set_equilibrium(new, lattice, 1, side, free_stream)
    inlet, inlet_inner, _ = face_column(position, 0, 1)
    bc.inlet(g, inlet, inlet_inner, np.ones(inlet.size), speed, c, w)
    faces.inlet(new, lattice, free_stream)
    bc.outlet(g, *face_column(position, -1, -2)[:2], c, w)
    faces.outlet(new, lattice)
    bc.reset_nodes(g, node_runs(position[:, 2:4, 1:3, 2:5]), w)
    new[:, :, 2:4, 1:3, 2:5] = torch.from_numpy(lattice.w.astype(np.float32)).view(q, 1, 1, 1, 1)
    np.testing.assert_allclose(g[:, position], new.numpy(), rtol=0, atol=2e-7)  # float64 sums here, float32 there
