"""zovh as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Revisiting Zeroth-Order Hessian Approximation: A Single-Step Policy Optimization Lens (ZoVH)",
    pipeline="zeroth-order Hessian estimation (ZoVH)",
    nightly="20 6 * * *",
    stages=(
        Stage("generate", outputs=("problems",)),
        Stage("solve", inputs=("problems",), outputs=("runs",)),
        Stage("evaluate",
              inputs=("runs",), committed=("hessian_errors.csv", "descent.csv"), plots=("plots",), claims=True),
    ),
    command=Command("app", "Zeroth-order Hessian estimation of your own black-box function."),
)
