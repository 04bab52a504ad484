"""limuon as the project lists it (see flows/declaration.py)."""
from flows.declaration import Paper, Stage

PAPER = Paper(
    title="LiMuon: Light and Fast Muon Optimizer for Large Models",
    pipeline="LiMuon",
    nightly="20 4 * * *",
    stages=(
        Stage("generate", outputs=("mat_ls", "corpus")),
        Stage("calibrate", inputs=("corpus",), outputs=("calibration.json",)),
        Stage("train", inputs=("mat_ls", "corpus", "calibration.json"), outputs=("runs",)),
        Stage("evaluate", inputs=("runs",), plots=("plots",), claims=True),
    ),
)
