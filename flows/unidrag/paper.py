"""unidrag as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="UniDrag: multi-field aerodynamic prediction and robust shape optimization",
    pipeline="UniDrag CFD data and solver validation",
    nightly="0 1 * * *",
    stages=(
        Stage("generate", outputs=("shapes", "labels", "splits.json", "dataset_metrics.json")),
        Stage("validate", outputs=("lbm_validation.json",)),
        Stage("train", inputs=("shapes", "labels", "splits.json"), outputs=("models", "train_report.json"), models=True),
        Stage("solve", inputs=("shapes", "splits.json", "models"), outputs=("opt",)),
        Stage("calibrate", inputs=("opt", "labels"), outputs=("verified.json",)),
        Stage("evaluate",
              inputs=("shapes", "labels", "splits.json", "dataset_metrics.json", "lbm_validation.json", "models",
                      "train_report.json", "opt", "verified.json"),
              plots=("plots",), claims=True),
    ),
    command=Command("app", "Drag of your own vehicle mesh with the trained UniDrag surrogate: predict it, or minimise "
                           "it by a small FFD deformation (optionally verified by the LBM); `cfd`: the LBM validation "
                           "cases."),
)
