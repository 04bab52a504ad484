"""sps_safe as the project lists it (see flows/declaration.py)."""
from flows.declaration import Paper

PAPER = Paper(
    title="Safeguarded Stochastic Polyak Step Sizes for Non-smooth Optimization",
    pipeline="safeguarded stochastic Polyak step",
    nightly="0 5 * * *",
)
