"""neural_qaoa2: Neural QAOA^2, learned partitions and initial angles for divide-and-conquer QAOA (ICML 2026).

A critic learns the performance ratio of a QAOA^2 run from its level-0 decision; a generator learns
partitions and angles against the frozen critic; both are compared with heuristic partition policies.

params.py      the typed Params of one profile of stages/neural_qaoa2/params.yaml.
pipeline.py    the Prefect flows of the stages generate, solve, train, evaluate (STAGES).
evaluation.py  scores per policy, first places, the critic on held-out runs, claims C1-C3.
plots.py       rho per policy, the critic's calibration.
cli.py         `papers neural-qaoa2 solve`: QAOA^2 on a user's graph or QUBO.
"""
