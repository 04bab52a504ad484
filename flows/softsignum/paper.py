"""softsignum as the project lists it (see flows/declaration.py)."""
from flows.declaration import Paper, Stage

PAPER = Paper(
    title="SoftSign: Smooth Sign in Your Optimizer (SoftSignum / SoftMuon)",
    pipeline="SoftSignum / SoftMuon",
    nightly="0 4 * * *",
    stages=(
        Stage("generate", outputs=("instances", "stdlib_charlm.npz", "stdlib_charlm.manifest.json")),
        Stage("calibrate",
              inputs=("stdlib_charlm.npz", "stdlib_charlm.manifest.json"), outputs=("calibration.json",)),
        Stage("train",
              inputs=("instances", "stdlib_charlm.npz", "stdlib_charlm.manifest.json", "calibration.json"),
              outputs=("runs",)),
        Stage("evaluate", inputs=("runs",), plots=("plots",), claims=True),
    ),
)
