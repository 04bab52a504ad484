"""The numba kernel's pair form for D3Q19 BGK (tasks/cfd/fused_kernel.py, issue 42) against the matrix form
f* = A f + B m that the torch solver runs: the generated update in float64 numpy, and one compiled collide + push
pass against numpy. D2Q9 keeps the matrix form (the data set's labels are computed with it)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tasks.cfd.fused import PaddedLayout
from tasks.cfd.fused_kernel import (PAIR_FORM, coefficients, compiled_solver, kernel_coefficients, kernel_source,
                                    pair_coefficient_lines, pair_update_lines)
from tasks.cfd.kernels import collision_matrices, equilibrium_moments, moment_matrix
from tasks.cfd.lattice import get_lattice

OMEGA = 1 / 0.6


def populations(lattice, nodes: int, seed: int = 0) -> np.ndarray:
    """Populations near rest with a flow: w_i (1 + noise), [Q, nodes]."""
    noise = np.random.default_rng(seed).uniform(-0.3, 0.3, (lattice.q, nodes))
    return lattice.w[:, None] * (1 + noise)


def matrix_form(lattice, f: np.ndarray, omega: float) -> np.ndarray:
    """The torch solver's collision in float64: f* = A f + B m."""
    a, b = collision_matrices(lattice, omega, "bgk")
    m = equilibrium_moments(torch.as_tensor(moment_matrix(lattice) @ f)).numpy()
    return a * f + b @ m


def test_the_pair_form_is_the_matrix_form_in_exact_arithmetic():
    """The generated lines run as numpy on float64 arrays reproduce A f + B m to rounding."""
    lattice = get_lattice("D3Q19")
    f = populations(lattice, 500)
    scope = {"coef": kernel_coefficients("D3Q19", "bgk", OMEGA, np.float64), "f_in": f, "f_out": np.empty_like(f),
             "rs": np.zeros(500), "us": np.zeros((3, 500))}
    lines = pair_coefficient_lines("D3Q19") + pair_update_lines("D3Q19", True, load="f_in[{i}]", store="f_out[{i}]",
                                                                 rho_sum="rs", u_sum="us[{a}]")
    exec("\n".join(lines), scope)
    np.testing.assert_allclose(scope["f_out"], matrix_form(lattice, f, OMEGA), rtol=0, atol=1e-15)
    np.testing.assert_allclose(scope["rs"], f.sum(0), rtol=1e-15)
    np.testing.assert_allclose(scope["us"], lattice.c.T @ f / f.sum(0), rtol=0, atol=1e-15)


def test_only_d3q19_bgk_takes_the_pair_form():
    assert PAIR_FORM == {("D3Q19", "bgk")}
    np.testing.assert_array_equal(kernel_coefficients("D2Q9", "bgk", OMEGA, np.float32),
                                  coefficients("D2Q9", "bgk", OMEGA, np.float32))
    np.testing.assert_array_equal(kernel_coefficients("D3Q19", "trt", OMEGA, np.float32),
                                  coefficients("D3Q19", "trt", OMEGA, np.float32))
    assert "p01" in kernel_source("D2Q9", "bgk", averaging=False)  # the matrix form's j_x j_z / rho
    pair = kernel_source("D3Q19", "bgk", averaging=True)
    assert "p01" not in pair and "base = one - k15" in pair and "us2[n] += u2" in pair


@pytest.mark.heavy
def test_the_compiled_pair_kernel_collides_and_pushes_as_numpy_does():
    """One averaging pass of the generated D3Q19 kernel on float32 buffers: every real node's f*_i lands at
    node + offset_i, equal to the float64 matrix form to float32 rounding, and the sums gain rho and u."""
    lattice, grid = get_lattice("D3Q19"), (6, 5, 4)
    layout = PaddedLayout.build(lattice, 2, grid)
    nodes = layout.position.ravel()
    f = np.zeros((lattice.q, layout.size), np.float32)
    f[:, nodes] = populations(lattice, nodes.size, seed=1)
    g = np.zeros_like(f)
    sums = np.zeros((1 + lattice.dim, layout.size))
    compiled_solver("D3Q19", "bgk").step_averaging(*f, *g, *sums, *layout.span, layout.offsets,
                                                   kernel_coefficients("D3Q19", "bgk", OMEGA, np.float32))
    expected = matrix_form(lattice, f[:, nodes].astype(np.float64), OMEGA)
    pushed = np.stack([g[i, nodes + layout.offsets[i]] for i in range(lattice.q)])
    np.testing.assert_allclose(pushed, expected, rtol=0, atol=2e-7)
    rho = f[:, nodes].astype(np.float64).sum(0)
    np.testing.assert_allclose(sums[0, nodes], rho, rtol=1e-6)
    np.testing.assert_allclose(sums[1:, nodes], lattice.c.T @ f[:, nodes].astype(np.float64) / rho, atol=1e-7)
