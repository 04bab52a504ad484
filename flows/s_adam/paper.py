"""s_adam as the project lists it (see flows/declaration.py)."""
from flows.declaration import Paper, Stage

PAPER = Paper(
    title="Singularity-aware Optimization via Randomized Geometric Probing (S-Adam)",
    pipeline="S-Adam",
    nightly="40 4 * * *",
    stages=(
        Stage("generate", outputs=("splits", "manifest.json")),
        Stage("train", inputs=("splits",), outputs=("runs",)),
        Stage("control", inputs=("splits", "runs"), outputs=("controls",)),
        Stage("evaluate", inputs=("runs", "controls"), committed=("summary.csv",), plots=("plots",), claims=True),
    ),
)
