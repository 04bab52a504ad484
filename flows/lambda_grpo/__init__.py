"""lambda_grpo: GRPO is secretly a process reward model (Sullivan, Koller; ICML 2026).

GRPO vs lambda-GRPO (per-token weight 1 / |lambda(i, t)|, the size of the token's process set) from the same SFT
policy on noisy chain arithmetic, with the tiny-LM library tasks/lm (stages/lambda_grpo/README.md).

- params.py: the typed Params of stages/lambda_grpo/params.yaml.
- process_sets.py: the process-set trie of a group, the 1/|lambda| weights, MC-PRM values, tree statistics.
- rl.py: one RL run (sampling, weights, loss, Adam step, evaluations).
- equivalence.py: C1, the float64 gradient identity GRPO = PRM form.
- experiments.py: the stages' recipes (data, SFT policy, RL run, C1) as plain functions, and the run outside DVC of
  `papers lambda-grpo train`.
- pipeline.py: the Prefect flows generate, train, tune, solve, evaluate (`STAGES`).
- claims.py: the precondition, C1-C5; plots.py: accuracy curves with seed bands, |lambda| histogram.
- cli.py: `papers lambda-grpo weights | train`.
"""
