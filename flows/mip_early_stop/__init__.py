"""mip_early_stop: Conformal Prediction for Early Stopping in Mixed Integer Optimization (Clarke & Stellato, ICML 2026).

An LSTM reads SCIP's state along a solve and predicts the incumbent's true gap; a split-conformal threshold
on its predictions stops the solve early with a coverage guarantee (stages/mip_early_stop/README.md; solver,
features, model, conformal rules and the online stopper in tasks/mip/).

- params.py: the typed Params of stages/mip_early_stop/params.yaml.
- pipeline.py: the Prefect flows generate, solve, train, calibrate, evaluate (`STAGES`).
- calibration.py: the conformal thresholds of the network, the algorithmic-gap rule and the time limit per family.
- replay.py: every rule replayed on the test split, coverage over random splits, online re-solves vs replay, the summary.
- claims.py: the claim checks C1 (coverage), C2 (time saved), C3 (network vs gap rule) per family.
- plots.py: coverage over splits, time saved per rule, predicted vs true gap.
- cli.py: `papers mip-early-stop stop`, solving a user's MIP with a trained, calibrated stopper.
"""
