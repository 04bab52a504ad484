"""mip_early_stop as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="Conformal Prediction for Early Stopping in Mixed Integer Optimization",
    pipeline="learned MIP early-stopping",
    nightly="30 3 * * *",
    commands={
        "mip": Command("app", "Early stopping of SCIP with a conformally calibrated gap predictor."),
    },
)
