"""unidrag: UniDrag, a multi-field vehicle aerodynamics surrogate and robust differentiable shape optimisation (ICML 2026).

Parametric 2D vehicles labelled by the lattice-Boltzmann solver (tasks/cfd), point-cloud surrogates
(the UniDrag network here, the baselines and training in tasks/cfd/surrogate), FFD drag minimisation
through the frozen surrogate and its LBM verification.

params.py          the typed Params of one profile of stages/unidrag/params.yaml.
pipeline.py        the Prefect flows of the stages generate, validate, train, solve, calibrate, evaluate (STAGES).
dataset.py         the generate stage's data set (shapes/, labels/, splits.json) as surrogate samples.
dataset_checks.py  the data set's summary metrics and the solver-validation claims V1-V3.
network.py         the UniDrag network: ePSA trunk, Gated Expert Routing, the shared heads.
surrogates.py      the surrogate kinds (UniDrag, its ablations, the baselines): built from a config, loaded from a file.
claims.py          claims C1 (multi-field prediction), C2 and C3 (verified robust optimisation).
dataset_plots.py   plots of the data set: Cd per body type, surface Cp, drag build-up, convergence.
opt_plots.py       plots of the surrogates and optimisations: predicted vs LBM Cd, profiles, silhouettes.
cli.py             `papers unidrag cfd` (solver validation cases) and `papers unidrag` (a user's mesh: predict, optimize).
"""
