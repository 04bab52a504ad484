"""Zeroth-order (function-value-only) estimation: randomized Hessian estimators behind one interface
(hessian.py), the smooth test functions with exact autograd Hessians (functions.py), and batched zeroth-order
descent with or without curvature (descent.py)."""
