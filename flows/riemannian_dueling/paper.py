"""riemannian_dueling as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Riemannian Dueling Optimization (RDNGD / RDFW)",
    pipeline="Riemannian dueling optimization",
    nightly="10 1 * * *",
    stages=(
        Stage("generate", outputs=("problems",)),
        Stage("solve", inputs=("problems",), outputs=("runs",)),
        Stage("evaluate", inputs=("runs",), committed=("summary.csv",), plots=("plots",), claims=True),
    ),
    command=Command("app", "Comparison-only minimisation on a manifold (RDNGD, RDFW)."),
)
