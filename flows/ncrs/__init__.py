"""ncrs: Noisy Pairwise-Comparison Random Search for Smooth Nonconvex Optimization (El Bakkali, Bouftini, Zhang,
Saadi; ICML 2026).

NCRS and its voting variant (tasks/comparison/random_search.py) against dueling NGD, exact-comparison search,
CMA-ES on comparison ranks (`cma`) and nevergrad's (1+1)-ES on values, on active-subspace nonconvex functions
(stages/ncrs/README.md).

- params.py: the typed Params of stages/ncrs/params.yaml.
- experiments.py: instances, the calibrated batches of chains, the hit recorder, the library runs.
- claims.py: C1-C3 and the report R4.
- plots.py: N(d) and gradient-norm traces.
- pipeline.py: the Prefect flows generate, solve, evaluate (`STAGES`).
- cli.py: `papers ncrs minimize MODULE:FUNCTION`.
"""
