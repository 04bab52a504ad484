"""sw_drso as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Distributionally Robust Set Representation Learning Under Inference-Time Element Corruption (SW-DRSO)",
    pipeline="SW-DRSO robust set representation",
    nightly="30 1 * * *",
    stages=(
        Stage("generate", outputs=("sets",)),
        Stage("train", inputs=("sets",), outputs=("models",), models=True),
        Stage("evaluate", inputs=("sets", "models"), committed=("accuracy.csv",), plots=("plots",), claims=True),
    ),
    command=Command("app", "Classify your own point cloud or mesh with the robust SW-DRSO set classifier."),
)
