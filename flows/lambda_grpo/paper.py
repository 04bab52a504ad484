"""lambda_grpo as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="GRPO is Secretly a Process Reward Model (lambda-GRPO; tiny-LM library `tasks/lm`)",
    pipeline="GRPO vs lambda-GRPO",
    nightly="50 5 * * *",
    stages=(
        Stage("generate", outputs=("generate",)),
        Stage("train", inputs=("generate",), outputs=("train",)),
        Stage("tune", inputs=("generate", "train"), outputs=("tune",)),
        Stage("solve", inputs=("generate", "train", "tune"), outputs=("solve",)),
        Stage("evaluate",
              inputs=("generate", "train", "tune", "solve"), committed=("summary.json",), plots=("plots",), claims=True),
    ),
    command=Command("app", "GRPO vs lambda-GRPO: process sets and token weights of your own groups; "
                    "runs on chain arithmetic."),
)
