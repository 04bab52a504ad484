"""fedcdwa as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="FedCDWA: Decoupled Federated Prototype Distillation with Hierarchical Wasserstein Aggregation",
    pipeline="FedCDWA federated prototype distillation",
    nightly="0 6 * * *",
    stages=(
        Stage("generate", outputs=("partitions",)),
        Stage("train", inputs=("partitions",), outputs=("runs",)),
        Stage("evaluate", inputs=("runs",), committed=("summary.csv",), plots=("plots",), claims=True),
    ),
    command=Command("app", "Federated prototype distillation with Wasserstein aggregation (FedCDWA) and its baselines."),
)
