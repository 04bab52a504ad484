"""balora: Balanced LoRA, removing parameter invariance to accelerate convergence (Castin, Nadjahi, Ablin, Peyré;
ICML 2026).

BaLoRA balances every LoRA pair after each optimizer step (tasks/lowrank: the projection, the synthetic problem,
the peft integration) against peft's LoRA (stages/balora/README.md).

- params.py: the typed Params of stages/balora/params.yaml.
- pipeline.py: the Prefect flows generate, train, solve, evaluate (`STAGES`).
- experiments.py: the stages' recipes: testbeds A (synthetic convergence) and B (Hessian conditioning at the end
  points); testbed C's base model and fine-tuning runs.
- corpus.py: testbed C's stdlib corpora (code for pre-training, docstrings for fine-tuning).
- finetune.py: one LoRA / BaLoRA fine-tuning run of a peft model (validation and test losses, the left factors'
  change per projection).
- timing.py: C4's alternated step timings on a larger seeded base, repeated.
- summaries.py, claims.py, plots.py: the summaries, claims C1-C4 and figures.
- cli.py: `papers balora finetune` on a user's saved tiny LM and text.
"""
