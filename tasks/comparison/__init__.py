"""Optimization from comparisons only ("is f(x) < f(y)?", possibly noisy), on R^d and on Riemannian manifolds.

- oracles.py: the comparison oracle with its noise models (exact, uniform margin, sqrt-gap, Bradley-Terry) and the
  value oracle of the function-value baselines, both counting queries (the unit of budget).
- objectives.py: test objectives with known minima (Rayleigh quotient, Karcher mean, simplex quadratic, active
  subspace nonconvex function).
- geometry.py: the manifolds (pymanopt's sphere, SPD, Stiefel; the flat probability simplex) with the uniform unit
  tangent sampler every dueling method needs.
- dueling.py: Riemannian dueling normalized gradient descent (RDNGD) and Frank-Wolfe (RDFW).
- zeroth_order.py: the value-based Riemannian zeroth-order method (RZO) and pymanopt's first-order RGD reference.
- random_search.py: comparison random search (NCRS, with voting) and Euclidean dueling NGD, vectorised over chains.
- ranking.py: CMA-ES (the `cma` package) driven by ranks from comparisons; nevergrad's (1+1)-ES on values.
- trace.py: the one result type of every method.
- user_function.py: a user's `MODULE:FUNCTION` objective, checked at the door.
"""
