"""mip_early_stop as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Conformal Prediction for Early Stopping in Mixed Integer Optimization",
    pipeline="learned MIP early-stopping",
    nightly="30 3 * * *",
    stages=(
        Stage("generate", outputs=("instances",)),
        Stage("solve", inputs=("instances",), outputs=("trajectories", "baselines")),
        Stage("train", inputs=("trajectories",), outputs=("models", "train_curve.csv")),
        Stage("calibrate", inputs=("trajectories", "models"), outputs=("stoppers", "calibration.json"), models=True),
        Stage("evaluate",
              inputs=("instances", "trajectories", "baselines", "stoppers", "calibration.json"),
              committed=("results.csv", "online.csv"), plots=("plots",), claims=True),
    ),
    command=Command("app", "Early stopping of SCIP with a conformally calibrated gap predictor."),
)
