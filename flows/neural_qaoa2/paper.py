"""neural_qaoa2 as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Neural QAOA^2: Differentiable Joint Graph Partitioning and Parameter Initialization",
    pipeline="Neural QAOA^2",
    nightly="0 2 * * *",
    stages=(
        Stage("generate", outputs=("graphs", "reference.json")),
        Stage("solve", inputs=("graphs", "reference.json"), outputs=("critic_data.json",)),
        Stage("train", inputs=("graphs", "critic_data.json"), outputs=("networks.pt", "train_curves.csv"), models=True),
        Stage("evaluate",
              inputs=("graphs", "reference.json", "networks.pt"), committed=("runs.csv", "per_graph.csv"),
              plots=("plots",), claims=True),
    ),
    command=Command("app", "Divide-and-conquer QAOA on your own graphs."),
)
