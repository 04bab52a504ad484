"""sps_safe as the project lists it (see flows/declaration.py)."""
from flows.declaration import Paper, Stage

PAPER = Paper(
    title="Safeguarded Stochastic Polyak Step Sizes for Non-smooth Optimization",
    pipeline="safeguarded stochastic Polyak step",
    nightly="0 5 * * *",
    stages=(
        Stage("generate", outputs=("problems",)),
        Stage("solve", inputs=("problems",), outputs=("runs",)),
        Stage("train", inputs=("problems",), outputs=("digits",)),
        Stage("evaluate", inputs=("runs", "digits"), committed=("summary.csv",), plots=("plots",), claims=True),
    ),
)
