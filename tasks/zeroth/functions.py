"""Smooth test functions for zeroth-order methods, batched over points: f(X) with X (m, d) -> (m,), torch float64,
so that torch's autograd gives their exact Hessians (`autograd_hessian`); closed forms are kept beside them to
cross-check autograd (tests) and the minimisers the evaluation regimes start from.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch


def quadratic(A: torch.Tensor, b: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """0.5 x^T A x + b^T x (A symmetric)."""
    return lambda X: 0.5 * ((X @ A) * X).sum(-1) + X @ b


def rosenbrock(alpha: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """sum_i alpha (x_{i+1} - x_i^2)^2 + (1 - x_i)^2."""
    return lambda X: (alpha * (X[..., 1:] - X[..., :-1] ** 2) ** 2 + (1 - X[..., :-1]) ** 2).sum(-1)


def styblinski_tang(X: torch.Tensor) -> torch.Tensor:
    return 0.5 * (X ** 4 - 16 * X ** 2 + 5 * X).sum(-1)


def sphere(X: torch.Tensor) -> torch.Tensor:
    """0.5 ||x||^2."""
    return 0.5 * (X * X).sum(-1)


def levy(X: torch.Tensor) -> torch.Tensor:
    w = 1 + (X - 1) / 4
    head = torch.sin(math.pi * w[..., 0]) ** 2
    body = ((w[..., :-1] - 1) ** 2 * (1 + 10 * torch.sin(math.pi * w[..., :-1] + 1) ** 2)).sum(-1)
    tail = (w[..., -1] - 1) ** 2 * (1 + torch.sin(2 * math.pi * w[..., -1]) ** 2)
    return head + body + tail


def ackley(X: torch.Tensor, a: float = 20.0, b: float = 0.2, c: float = 2 * math.pi) -> torch.Tensor:
    return (-a * torch.exp(-b * torch.sqrt((X * X).mean(-1))) - torch.exp(torch.cos(c * X).mean(-1))
            + a + math.e)


def autograd_hessian(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The exact Hessian of f at one point x (d,) by torch.autograd.functional.hessian (vectorized)."""
    return torch.autograd.functional.hessian(lambda z: f(z[None])[0], x, vectorize=True)


def rosenbrock_hessian(x: torch.Tensor, alpha: float) -> torch.Tensor:
    """Closed form: tridiagonal."""
    diag = torch.zeros_like(x)
    diag[:-1] += alpha * (12 * x[:-1] ** 2 - 4 * x[1:]) + 2
    diag[1:] += 2 * alpha
    off = -4 * alpha * x[:-1]
    return torch.diag(diag) + torch.diag(off, 1) + torch.diag(off, -1)


def styblinski_tang_hessian(x: torch.Tensor) -> torch.Tensor:
    return torch.diag(6 * x ** 2 - 16)


ST_MINIMISER = -2.903534


@dataclass(frozen=True)
class TestFunction:
    """A named test function: its batched values, exact Hessian at a point and minimiser."""

    name: str
    f: Callable[[torch.Tensor], torch.Tensor]
    minimiser: torch.Tensor

    def hessian(self, x: torch.Tensor) -> torch.Tensor:
        return autograd_hessian(self.f, x)


def random_quadratic(d: int, generator: torch.Generator, condition: float = 10.0) -> tuple[torch.Tensor, torch.Tensor]:
    """A = Q diag(linspace(1, condition, d)) Q^T with Q Haar-orthogonal, b ~ N(0, I)."""
    G = torch.randn(d, d, generator=generator, dtype=torch.float64)
    Q, R = torch.linalg.qr(G)
    Q = Q * torch.sign(torch.diagonal(R))  # the Haar measure needs the sign fix
    A = (Q * torch.linspace(1.0, condition, d, dtype=torch.float64)) @ Q.T
    return 0.5 * (A + A.T), torch.randn(d, generator=generator, dtype=torch.float64)


def hessian_study_functions(A: torch.Tensor, b: torch.Tensor, rosenbrock_alpha: float = 10.0) -> dict[str, TestFunction]:
    """The three functions of the ZoVH Hessian-error study with their minimisers."""
    d = len(b)
    return {"quadratic": TestFunction("quadratic", quadratic(A, b), torch.linalg.solve(A, -b)),
            "rosenbrock": TestFunction("rosenbrock", rosenbrock(rosenbrock_alpha), torch.ones(d, dtype=torch.float64)),
            "styblinski_tang": TestFunction("styblinski_tang", styblinski_tang,
                                            torch.full((d,), ST_MINIMISER, dtype=torch.float64))}


OPTIMISATION_FUNCTIONS = {"quadratic": sphere, "levy": levy, "ackley": ackley}
