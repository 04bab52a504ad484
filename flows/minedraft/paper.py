"""minedraft as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="MineDraft: A Framework for Batch Parallel Speculative Decoding",
    pipeline="MineDraft batch-parallel speculative decoding",
    nightly="20 6 * * *",
    commands={
        "minedraft": Command("app", "MineDraft: AR, speculative and batch-parallel speculative decoding of your own prompts."),
    },
)
