"""zovh: zeroth-order Hessian estimation through a single-step policy-optimization lens (Qiu, Hong, Xu, Shu; ICML 2026).

ZoVH (the mean-baseline likelihood-ratio Hessian estimator, with query reuse) against the classical randomized
estimators S1, S2, SCD, CD at equal queries on the quadratic, Rosenbrock and Styblinski-Tang functions, errors
against torch autograd's exact Hessians; and its curvature-aware descent against ZO-SGD, ZoAR and the S2 / SCD
estimators in the same step, every method at the same queries per iteration
(stages/zovh/README.md; the estimators in tasks/zeroth/hessian.py, the descent in tasks/zeroth/descent.py).

- params.py: the typed Params of stages/zovh/params.yaml.
- points.py: the evaluation points of the Hessian study (R-near and R-paper starts, normalised-gradient path).
- experiments.py: one seed of the Hessian-error study, every estimator along every path; one (function, method,
  seed) descent over the step-size grid; the best step per method.
- claims.py: the claim checks C1-C5; plots.py: error per estimator and query budget, descent curves.
- pipeline.py: the Prefect flows generate, solve, evaluate (`STAGES`); cli.py: `papers zovh estimate`.
"""
