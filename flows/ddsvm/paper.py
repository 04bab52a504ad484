"""ddsvm as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="DDSVM: A Differentiable Framework for Deep Support Vector Machines",
    pipeline="DDSVM data-scarce digits",
    nightly="20 5 * * *",
    stages=(
        Stage("generate", outputs=("splits",)),
        Stage("train", inputs=("splits",), outputs=("models",)),
        Stage("evaluate", inputs=("splits", "models"), committed=("results.csv",), plots=("plots",), claims=True),
    ),
    command=Command("app", "Deep features trained for an explicit SVM margin (DDSVM) on your own CSV."),
)
