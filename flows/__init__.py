"""One package per paper, found by its slug: `flows/<paper>/`.

Each holds `params.py` (the typed `Params` of one profile), `pipeline.py` (its stages as Prefect flows wiring
task-library calls, and the literal `STAGES`: stage name -> flow taking (params, StageContext) and returning a
StageReport), its pure modules (experiment recipes, claim checks, plots) and, where it has commands, `cli.py`.
`runtime.py` (the task runner setting) and `reproduce.py` (the deployed pipeline) are shared by every paper.
"""
