"""metadistill as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="MetaDistill: Unlocking the Performance Ceiling for Pretrained Optimizers",
    pipeline="MetaDistill learned-optimiser distillation",
    nightly="40 5 * * *",
    stages=(
        Stage("generate", outputs=("teacher_raw.pkl", "teacher_sel.pkl")),
        Stage("train", inputs=("teacher_sel.pkl",), outputs=("models",), models=True),
        Stage("solve", inputs=("models",), outputs=("runs",)),
        Stage("evaluate", inputs=("runs", "models"), committed=("summary.csv",), plots=("plots",), claims=True),
    ),
    command=Command("app", "Minimise your own black-box function with a distilled learned optimiser (LES)."),
)
