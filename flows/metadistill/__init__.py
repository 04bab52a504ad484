"""metadistill: distilling expert optimisation trajectories into learnable black-box optimisers (Han et al.,
ICML 2026), with LES as the student (stages/metadistill/README.md).

- params.py: the typed Params of stages/metadistill/params.yaml.
- pipeline.py: the Prefect flows generate, train, solve, evaluate (`STAGES`).
- functions.py: the five shifted training functions F2-F6.
- knowledge.py: the teachers' runs per (episode, function) and the stitched knowledge base.
- les.py: the student, LES; kl.py: the normalised KL loss and the alignment index.
- distill.py: the distillation loop; metatrain.py: the baseline's outer CMA-ES meta-training.
- rollout.py: a student run within an evaluation budget, with optional test-time SSFT; CMA-ES at the same budget.
- acrobot.py: Acrobot-v1 in numpy; control.py: neuroevolution of an MLP policy on it (claim C3).
- variants.py, summaries.py, claims.py, plots.py: the evaluation.
- cli.py: `papers metadistill minimize` on a user's function or a BBOB problem.
"""
