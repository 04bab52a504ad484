"""riemannian_dueling as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="Riemannian Dueling Optimization (RDNGD / RDFW)",
    pipeline="Riemannian dueling optimization",
    nightly="10 1 * * *",
    commands={
        "dueling": Command("app", "Comparison-only minimisation on a manifold (RDNGD, RDFW)."),
    },
)
