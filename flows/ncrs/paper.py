"""ncrs as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="Noisy Pairwise-Comparison Random Search for Smooth Nonconvex Optimization (NCRS)",
    pipeline="noisy-comparison random search",
    nightly="20 1 * * *",
    commands={
        "ncrs": Command("app", "Comparison-only random search on R^d (NCRS)."),
    },
)
