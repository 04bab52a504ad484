"""The sps_safe paper's vectorised numpy sweep (flows/sps_safe/sweep.py): IMA identities along a run, settings
checks, the batch oracle, the LP optimum as a floor, reproducibility, and the torch optimizers of tasks/optim/polyak.py
against it."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from flows.sps_safe.sweep import HingeSVM, Method, draw_indices, iterate, run_sweep
from tasks.core.device import single_torch_thread
from tasks.optim.polyak import IMASPSSafe, SPSMax, SPSSafe, ima_sps_safe_step, sps_safe_step
from tasks.train.synthetic import hinge_losses, hinge_subgradients
from tests.optim.test_polyak import interpolated, noisy


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    single_torch_thread()


def small_noisy_problem(n: int = 120, d: int = 8, seed: int = 0) -> tuple[HingeSVM, np.ndarray]:
    """A non-separable hinge problem small enough for step-by-step checks; x0 = randn."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d))
    b = np.where(rng.random(n) < 0.8, 1.0, -1.0) * np.sign(A @ rng.standard_normal(d))
    return HingeSVM(A, b), rng.standard_normal(d)


def test_ima_with_lam_zero_is_sps_safe():
    problem, x0 = small_noisy_problem()
    result = run_sweep(problem, [Method(rule="sps_safe", param=2.0), Method(rule="ima_sps_safe", param=2.0, lam=0)],
                       x0=x0, f_star=0.0, epochs=3, batch=4, seed=0)
    np.testing.assert_array_equal(result.x_final[0], result.x_final[1])
    assert ima_sps_safe_step(1.5, 3.0, 0.0, 2.0) == sps_safe_step(1.5, 3.0, 2.0)
    assert ima_sps_safe_step(1.5, 3.0, -4.0, 2.0) == 0.0  # the [.]_+ clip


@pytest.mark.parametrize("lam", [9.0, "t"])
def test_z_minus_x_is_lam_times_the_last_move_along_a_run(lam):
    problem, x0 = small_noisy_problem()
    methods = [Method(rule="ima_sps_safe", param=1.0, lam=lam), Method(rule="ima", param=0.01, lam=lam)]
    x_prev = np.tile(x0, (2, 1))
    for t, X, Z, _, _ in iterate(problem, methods, x0, draw_indices(problem.n, 1, 400, seed=3)):
        lam_t = t + 1.0 if lam == "t" else lam
        scale = max(1.0, np.abs(X).max())
        np.testing.assert_allclose(Z - X, lam_t * (X - x_prev), rtol=0, atol=1e-12 * scale)
        x_prev = X
    assert np.abs(Z - X).max() > 1e-3  # the momentum is really there


def test_bad_settings_name_the_field():
    x = [torch.zeros(2, requires_grad=True)]
    for make, field in ((lambda: SPSSafe(x, M=0), "M"), (lambda: SPSMax(x, gamma_b=-1), "gamma_b"),
                        (lambda: IMASPSSafe(x, lam=-1), "lam"), (lambda: SPSSafe(x, weight_decay=-1), "weight_decay"),
                        (lambda: Method(rule="adam", param=1.0), "rule"), (lambda: Method(rule="sps_safe"), "M"),
                        (lambda: Method(rule="sgd", param=0.1, lam=9), "lam")):
        with pytest.raises(ValueError, match=field):
            make()
    with pytest.raises(ValueError, match="closure"):
        SPSSafe(x).step()


def test_batch_oracle_matches_the_per_sample_subgradients_and_finite_differences():
    problem, x0 = small_noisy_problem()
    X = np.stack([x0, 2 * x0])
    idx = np.array([3, 7, 7, 50])
    losses, G = problem.batch_oracle(X, idx)
    for r in range(2):
        np.testing.assert_allclose(losses[r], hinge_losses(problem.A, problem.b, X[r])[idx].mean())
        np.testing.assert_allclose(G[r], hinge_subgradients(problem.A, problem.b, X[r])[idx].mean(axis=0))
        h = 1e-7  # away from kinks: no margin within 1e-4 of 1
        assert np.all(np.abs(problem.b[idx] * (problem.A[idx] @ X[r]) - 1) > 1e-4)
        numeric = [(problem.batch_oracle(X[r:r + 1] + h * e, idx)[0] - problem.batch_oracle(X[r:r + 1] - h * e, idx)[0])[0]
                   / (2 * h) for e in np.eye(X.shape[1])]
        np.testing.assert_allclose(numeric, G[r], atol=1e-6)


def test_iterates_never_go_below_the_lp_optimum():
    for data in (noisy(), interpolated()):
        problem = HingeSVM(data["A"], data["b"])
        methods = [Method(rule="sgd", param=0.1), Method(rule="sps_safe", param=1.0), Method(rule="sps_max", param=10.0),
                   Method(rule="ima_sps_safe", param=10.0, lam=9), Method(rule="sps_plus")]
        result = run_sweep(problem, methods, x0=data["x0"], f_star=data["f_star"], epochs=2, batch=1, seed=0,
                           losses_at_optimum=hinge_losses(data["A"], data["b"], data["x_star"]))
        assert result.objective.min() >= data["f_star"] - 1e-9
        assert result.rel_subopt.shape == (5, 3) and np.allclose(result.rel_subopt[:, 0], 1)


def test_same_seed_same_trajectories_other_seed_differs():
    problem, x0 = small_noisy_problem()
    methods = [Method(rule="sps_safe", param=1.0), Method(rule="ima_sps_safe", param=1.0, lam=9), Method(rule="sgd", param=0.05)]
    run = lambda seed: run_sweep(problem, methods, x0=x0, f_star=0.0, epochs=3, batch=2, seed=seed)
    first, again, other = run(5), run(5), run(6)
    for key in ("objective", "step_sizes", "grad_norms", "x_final", "safeguard_fraction"):
        np.testing.assert_array_equal(getattr(first, key), getattr(again, key))
    assert not np.array_equal(first.x_final, other.x_final)


@pytest.mark.parametrize("method, make", [
    (Method(rule="sps_safe", param=1.0), lambda p: SPSSafe(p, M=1.0)),
    (Method(rule="sps_safe", param=100.0), lambda p: SPSSafe(p, M=100.0)),
    (Method(rule="sps_max", param=0.5, c=0.5), lambda p: SPSMax(p, c=0.5, gamma_b=0.5)),
    (Method(rule="ima_sps_safe", param=100.0, lam=9), lambda p: IMASPSSafe(p, M=100.0, lam=9)),
], ids=lambda v: v.label if isinstance(v, Method) else "")
def test_torch_optimizer_equals_the_numpy_sweep_on_a_linear_model(method, make):
    data = noisy()
    problem, batch, steps = HingeSVM(data["A"], data["b"]), 5, 200
    numpy_run = run_sweep(problem, [method], x0=data["x0"], f_star=data["f_star"], epochs=2, batch=batch, seed=4)
    A, b = torch.from_numpy(data["A"]), torch.from_numpy(data["b"])
    x = torch.tensor(data["x0"], requires_grad=True)
    opt = make([x])
    for idx in torch.from_numpy(draw_indices(problem.n, batch, steps, seed=4)):
        def closure(idx=idx):
            opt.zero_grad()
            loss = torch.clamp(1 - b[idx] * (A[idx] @ x), min=0).mean()
            loss.backward()
            return loss

        opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), numpy_run.x_final[0], rtol=0, atol=1e-6)
    assert np.abs(numpy_run.x_final[0] - data["x0"]).max() > 1e-2
