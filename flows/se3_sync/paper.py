"""se3_sync as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="Dual Quaternion SE(3) Synchronization with Recovery Guarantees",
    pipeline="SE(3) synchronization",
    nightly="0 3 * * *",
    commands={
        "se3-sync": Command("app", "SE(3) synchronization on your own pose graphs."),
    },
)
