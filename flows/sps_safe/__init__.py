"""sps_safe: Safeguarded Stochastic Polyak Step Sizes for non-smooth optimization (Oikonomou, Loizou; ICML 2026).

SPS_safe and IMA-SPS_safe against SGD, SPS_max and the SPS+ oracle on hinge SVMs with exact f* (P1, P2), and
the digits MLP (P3) (stages/sps_safe/README.md; the rules in tasks/optim/polyak.py, the vectorised numpy sweep
in sweep.py, the MLP runner in tasks/train/digits.py).

- params.py: the typed Params of stages/sps_safe/params.yaml.
- pipeline.py: the Prefect flows generate, solve, train, evaluate (`STAGES`).
- experiments.py: one P3 digits run per (optimizer, seed), with the registry's optimizers, as the paper's record.
- calibration.py: C1's tuned grids (P1 SGD, SPS_max) widened at an edge by tasks.train.lr_grid; the fold of the
  added sweeps into each seed's sweep.
- summaries.py: per-method summaries over seeds (P1, P2), the P3 diagnostics, the flat metrics.
- claims.py: the claim checks C1 (P1 vs tuned baselines), C2 (M controls the neighbourhood), C3 (IMA variant).
- plots.py: relative sub-optimality, step sizes and gradient norms, the digits accuracy and traces.
"""
