"""s_adam: S-Adam, singularity-aware Adam: AdamW braked by a randomized probe of the local geometry (ICML 2026).

Digits QAT and noisy small-batch digits against AdamW and Prox-SGD, and the nonsmooth Rosenbrock toy
(stages/s_adam/README.md; the update rule in tasks/optim/sadam.py, the MLP runner in tasks/train/digits.py).

- params.py: the typed Params of stages/s_adam/params.yaml.
- pipeline.py: the Prefect flows generate, train, control, evaluate (`STAGES`).
- experiments.py: one digits or Rosenbrock run per (optimizer, seed), with the registry's optimizers, as the paper's records.
- claims.py: per-run summaries, medians over seeds and the claim checks C1 (QAT), C2 (noisy labels), C3 (chattering),
  each decided on a paired bootstrap over seeds.
- controls.py: the control of C1 and C2, AdamW at lr x S-Adam's measured mean damping.
- plots.py: per-epoch curves with LGI damping, Rosenbrock paths.
"""
