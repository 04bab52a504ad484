"""prox_last_iterate as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Convergence Rate of the Last Iterate of Stochastic Proximal Algorithms",
    pipeline="last-iterate stochastic proximal methods",
    nightly="40 6 * * *",
    stages=(
        Stage("generate", outputs=("problems",)),
        Stage("solve", inputs=("problems",), outputs=("runs",)),
        Stage("evaluate", inputs=("runs",), committed=("gaps.csv", "slopes.csv"), plots=("plots",), claims=True),
    ),
    command=Command("app", "Stochastic proximal methods (last iterate) on your own composite problems."),
)
