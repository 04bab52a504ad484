"""se3_sync: Dual Quaternion SE(3) Synchronization with Recovery Guarantees (Zhao, Zhu, So; ICML 2026).

Recover n absolute poses from noisy relative poses with a dual-quaternion power method and DQGPM,
compared with EIG and spanning-tree chaining (stages/se3_sync/README.md; methods in tasks/sync/).

- params.py: the typed Params of stages/se3_sync/params.yaml.
- pipeline.py: the Prefect flows generate, solve, evaluate (`STAGES`).
- errors.py: every run's gauge-aligned errors and their medians per noise level (errors.csv, error_vs_noise.csv).
- claims.py: the claim checks C1 (accuracy), C2 (efficiency), C3 (scan registration).
- plots.py: error vs noise, wall time vs n, DQGPM convergence.
- cli.py: `papers se3-sync solve`, synchronizing a user's g2o pose graph.
"""
