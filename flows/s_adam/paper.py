"""s_adam as the project lists it (see flows/declaration.py)."""
from flows.declaration import Paper

PAPER = Paper(
    title="Singularity-aware Optimization via Randomized Geometric Probing (S-Adam)",
    pipeline="S-Adam",
    nightly="40 4 * * *",
)
