"""minedraft as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="MineDraft: A Framework for Batch Parallel Speculative Decoding",
    pipeline="MineDraft batch-parallel speculative decoding",
    nightly="20 6 * * *",
    stages=(
        Stage("generate", outputs=("generate",)),
        Stage("train", inputs=("generate",), outputs=("train",)),
        Stage("solve", inputs=("generate", "train"), outputs=("solve",)),
        Stage("evaluate", inputs=("solve",), committed=("summary.json",), plots=("plots",), claims=True),
    ),
    command=Command("app", "MineDraft: AR, speculative and batch-parallel speculative decoding of your own prompts."),
)
