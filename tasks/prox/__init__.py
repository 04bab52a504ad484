"""Composite convex optimisation min f(x) + g(x): proximal maps (maps.py), the graph-guided network Lasso and the
Lasso with their stochastic gradients (problems.py), stochastic proximal methods that keep their last, averaged
and suffix-averaged iterates (stochastic.py), and high-precision reference optima (reference.py)."""
