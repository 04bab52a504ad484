"""One module per paper: its stages as Prefect flows wiring task-library calls.

Each module exposes `Params` (the typed params of one profile) and `STAGES` (stage name ->
flow taking (params, StageContext) and returning a StageReport).
"""
