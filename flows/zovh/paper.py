"""zovh as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="Revisiting Zeroth-Order Hessian Approximation: A Single-Step Policy Optimization Lens (ZoVH)",
    pipeline="zeroth-order Hessian estimation (ZoVH)",
    nightly="20 6 * * *",
    commands={
        "zovh": Command("app", "Zeroth-order Hessian estimation of your own black-box function."),
    },
)
