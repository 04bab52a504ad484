"""neural_qaoa2 as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="Neural QAOA^2: Differentiable Joint Graph Partitioning and Parameter Initialization",
    pipeline="Neural QAOA^2",
    nightly="0 2 * * *",
    commands={
        "qaoa2": Command("app", "Divide-and-conquer QAOA on your own graphs."),
    },
)
