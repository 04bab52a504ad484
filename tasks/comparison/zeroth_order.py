"""The Riemannian baselines of the dueling methods: RZO, which reads function values, and the first-order
Riemannian gradient descent of pymanopt (a reference only: it needs gradients, infeasible in the black-box setting)."""
from __future__ import annotations

import time

import numpy as np

from .geometry import Geometry, PymanoptGeometry
from .oracles import ValueOracle
from .trace import Recorder, Result, notify


def rzo(geometry: Geometry, values: ValueOracle, x0: np.ndarray, budget: int, eta: float, mu: float, samples: int,
        rng: np.random.Generator, record: Recorder | None = None) -> Result:
    """Riemannian zeroth-order (Li, Balasubramanian, Ma): g = (1/m) sum_j [f(Exp_x(mu v_j)) - f(x)] / mu v_j with
    v_j Gaussian tangent vectors, then x <- Exp_x(-eta g); m + 1 evaluations per iteration, until `budget`."""
    start, used0 = time.perf_counter(), values.evaluations
    x, t = np.array(x0, dtype=float), 0
    notify(record, x, 0)
    while values.evaluations - used0 + samples + 1 <= budget:
        fx = values(x)
        g = np.zeros(geometry.shape)
        for _ in range(samples):
            v = geometry.gaussian_tangent(x, rng)
            g += (values(geometry.exp(x, mu * v)) - fx) / mu * v
        x = geometry.exp(x, -eta * g / samples)
        t += 1
        if notify(record, x, values.evaluations - used0):
            break
    return Result(x, t, values.evaluations - used0, time.perf_counter() - start)


def rgd(geometry: PymanoptGeometry, cost, euclidean_gradient, x0: np.ndarray, max_iterations: int) -> Result:
    """pymanopt's SteepestDescent (Armijo line search) from x0; `queries` counts its cost evaluations' iterations."""
    import pymanopt
    from pymanopt.optimizers import SteepestDescent

    manifold = geometry.manifold
    problem = pymanopt.Problem(manifold, cost=pymanopt.function.numpy(manifold)(lambda x: float(cost(x))),
                               euclidean_gradient=pymanopt.function.numpy(manifold)(euclidean_gradient))
    start = time.perf_counter()
    result = SteepestDescent(max_iterations=max_iterations, min_gradient_norm=1e-12, min_step_size=1e-14,
                             verbosity=0).run(problem, initial_point=np.array(x0, dtype=float))
    return Result(np.asarray(result.point), int(result.iterations), int(result.iterations),
                  time.perf_counter() - start, {"gradient_norm": float(result.gradient_norm)})
