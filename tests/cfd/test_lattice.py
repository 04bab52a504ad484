"""Velocity sets, equilibrium moments and the matrix form of the collision operators."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tasks.cfd.kernels import StepOperators, collide, equilibrium_matrix, equilibrium_moments, trt_minus_rate
from tasks.cfd.lattice import CS2, equilibrium, get_lattice, moments

LATTICES = ("D2Q9", "D3Q19", "D3Q27")


def random_state(lattice, n=64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    rho = 1 + 0.1 * torch.rand(n, generator=generator, dtype=torch.float64)
    u = 0.1 * torch.randn(lattice.dim, n, generator=generator, dtype=torch.float64)
    return rho, u


@pytest.mark.parametrize("name", LATTICES)
def test_weights_and_isotropy(name):
    lattice = get_lattice(name)
    c, w = lattice.c.astype(float), lattice.w
    assert lattice.q == int(name.split("Q")[1])
    assert w.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(np.einsum("i,ia->a", w, c), 0, atol=1e-15)
    np.testing.assert_allclose(np.einsum("i,ia,ib->ab", w, c, c), CS2 * np.eye(lattice.dim), atol=1e-15)
    fourth = np.einsum("i,ia,ib,ic,id->abcd", w, c, c, c, c)
    delta = np.eye(lattice.dim)
    isotropic = CS2**2 * (np.einsum("ab,cd->abcd", delta, delta) + np.einsum("ac,bd->abcd", delta, delta)
                          + np.einsum("ad,bc->abcd", delta, delta))
    np.testing.assert_allclose(fourth, isotropic, atol=1e-15)
    np.testing.assert_array_equal(c[lattice.opposite], -c)


@pytest.mark.parametrize("name", LATTICES)
def test_equilibrium_moments(name):
    lattice = get_lattice(name)
    rho, u = random_state(lattice)
    feq = equilibrium(rho, u, lattice)
    c = torch.as_tensor(lattice.c, dtype=torch.float64)
    torch.testing.assert_close(feq.sum(0), rho, atol=1e-12, rtol=0)
    torch.testing.assert_close(torch.einsum("ia,in->an", c, feq), rho * u, atol=1e-12, rtol=0)
    second = torch.einsum("ia,ib,in->abn", c, c, feq)
    expected = rho * (CS2 * torch.eye(lattice.dim, dtype=torch.float64)[..., None] + u[:, None] * u[None, :])
    torch.testing.assert_close(second, expected, atol=1e-12, rtol=0)
    rho_back, u_back = moments(feq, lattice)
    torch.testing.assert_close(rho_back, rho, atol=1e-12, rtol=0)
    torch.testing.assert_close(u_back, u, atol=1e-12, rtol=0)


@pytest.mark.parametrize("name", LATTICES)
def test_equilibrium_matrix_matches_equilibrium(name):
    lattice = get_lattice(name)
    rho, u = random_state(lattice)
    m = equilibrium_moments(torch.cat([rho[None], rho * u]))
    torch.testing.assert_close(torch.as_tensor(equilibrium_matrix(lattice)) @ m, equilibrium(rho, u, lattice),
                               atol=1e-13, rtol=0)


@pytest.mark.parametrize("name", LATTICES)
@pytest.mark.parametrize("collision", ("bgk", "trt", "regularized"))
def test_collision_keeps_equilibrium_and_conserves_mass_momentum(name, collision):
    lattice = get_lattice(name)
    rho, u = random_state(lattice)
    feq = equilibrium(rho, u, lattice)
    operators = StepOperators.build(lattice, 1 / 0.7, collision, torch.float64, "cpu")
    out = torch.empty_like(feq)
    collide(feq, operators, out)
    torch.testing.assert_close(out, feq, atol=1e-14, rtol=0)
    perturbed = feq + 1e-3 * torch.randn(feq.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    before = collide(perturbed, operators, out)
    after = torch.as_tensor(np.vstack([np.ones(lattice.q), lattice.c.T]), dtype=torch.float64) @ out
    torch.testing.assert_close(after, before, atol=1e-14, rtol=0)
    relaxed_to = equilibrium(*moments(perturbed, lattice), lattice)
    weighted_norm = lambda x: (x * x / torch.as_tensor(lattice.w)[:, None]).sum().sqrt()
    assert weighted_norm(out - relaxed_to) < 0.5 * weighted_norm(perturbed - relaxed_to)  # |1 - omega| = 0.43


def test_bgk_relaxes_non_equilibrium_by_one_minus_omega():
    lattice = get_lattice("D2Q9")
    rho, u = random_state(lattice)
    feq = equilibrium(rho, u, lattice)
    delta = 1e-3 * torch.randn(feq.shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    delta -= equilibrium(*moments(feq + delta, lattice), lattice) - feq  # keep rho, u: pure non-equilibrium
    out = torch.empty_like(feq)
    collide(feq + delta, StepOperators.build(lattice, 1 / 0.8, "bgk", torch.float64, "cpu"), out)
    torch.testing.assert_close(out - feq, (1 - 1 / 0.8) * delta, atol=1e-12, rtol=0)


def test_trt_magic_parameter():
    omega = 1 / 0.6
    omega_minus = trt_minus_rate(omega)
    assert (1 / omega - 0.5) * (1 / omega_minus - 0.5) == pytest.approx(3 / 16)


def test_unknown_lattice_and_collision_are_named():
    with pytest.raises(ValueError, match="lattice: .* got 'D2Q7'"):
        get_lattice("D2Q7")
    with pytest.raises(ValueError, match="collision: .* got 'mrt'"):
        StepOperators.build(get_lattice("D2Q9"), 1.0, "mrt", torch.float64, "cpu")
