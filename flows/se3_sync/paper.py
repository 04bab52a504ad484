"""se3_sync as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Dual Quaternion SE(3) Synchronization with Recovery Guarantees",
    pipeline="SE(3) synchronization",
    nightly="0 3 * * *",
    stages=(
        Stage("generate", outputs=("instances", "timing_instances")),
        Stage("solve", inputs=("instances", "timing_instances"), outputs=("runs", "timing.json")),
        Stage("evaluate",
              inputs=("instances", "runs", "timing.json"), committed=("errors.csv", "error_vs_noise.csv"),
              plots=("plots",), claims=True),
    ),
    command=Command("app", "SE(3) synchronization on your own pose graphs."),
)
