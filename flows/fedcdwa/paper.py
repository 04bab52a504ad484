"""fedcdwa as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="FedCDWA: Decoupled Federated Prototype Distillation with Hierarchical Wasserstein Aggregation",
    pipeline="FedCDWA federated prototype distillation",
    nightly="0 6 * * *",
    commands={
        "fedcdwa": Command("app", "Federated prototype distillation with Wasserstein aggregation (FedCDWA) and its baselines."),
    },
)
