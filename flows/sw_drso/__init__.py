"""sw_drso: distributionally robust set representations under inference-time element corruption (Chen, Zhang,
He, Yu, Liu; ICML 2026), the method reconstructed as stages/sw_drso/README.md says.

- params.py: the typed Params of stages/sw_drso/params.yaml.
- adversary.py: the barycentric adversary (spec §3.4): T ascent steps on the simplex weights of the set's
  elements and of a pool of candidate outliers (capped simplex for deletions, mirror ascent for outliers).
- training.py: one training run of a method (ERM, Aug, the C3 controls Random-weights, Random-drop+outliers and
  Worst-of-K, SW-DRSO) at equal budget.
- budget_search.py: Task B's epochs and learning rate, chosen on a validation split of its training sets.
- model_files.py: trained classifiers as safetensors (tensors + JSON metadata with the training n; no pickle).
- evaluation.py: accuracy of a classifier on the test-time corruption suite (spec §6).
- claims.py: C1-C3 (+ the reported C4) of spec §6; plots.py: accuracy against corruption level per method.
- pipeline.py: the Prefect flows generate, train, evaluate (`STAGES`); cli.py: `papers sw-drso classify`.
"""
