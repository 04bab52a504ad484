"""ncrs as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Noisy Pairwise-Comparison Random Search for Smooth Nonconvex Optimization (NCRS)",
    pipeline="noisy-comparison random search",
    nightly="20 1 * * *",
    stages=(
        Stage("generate", outputs=("problems",)),
        Stage("solve", inputs=("problems",), outputs=("runs",)),
        Stage("evaluate", inputs=("runs",), committed=("summary.csv",), plots=("plots",), claims=True),
    ),
    command=Command("app", "Comparison-only random search on R^d (NCRS)."),
)
