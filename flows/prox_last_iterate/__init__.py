"""prox_last_iterate: convergence rate of the last iterate of stochastic proximal algorithms (Vaidyan, Friedlander,
Alacaoglu; ICML 2026).

RIP (randomized incremental proximal method, one random edge prox per step) on the graph-guided network Lasso
(Q1) and Prox-SGD on the diabetes Lasso (Q2) with the horizon-dependent constant step; the last iterate against
the uniform and suffix averages of the same runs, F* from cvxpy (Clarabel) / scikit-learn to high precision
(stages/prox_last_iterate/README.md; the algorithms in tasks/prox/).

- params.py: the typed Params of stages/prox_last_iterate/params.yaml.
- problems.py: the two instances (generator, data, reference optimum) and their torch problem objects.
- rates.py: per-seed log-log slopes of F - F* against T and their confidence interval over seeds.
- claims.py: C1 (ratio of gaps across horizons), C2 (last vs average on Q1), C3 (fitted slope); plots.py.
- pipeline.py: the Prefect flows generate, solve, evaluate (`STAGES`); cli.py: `papers prox-last-iterate solve`.
"""
