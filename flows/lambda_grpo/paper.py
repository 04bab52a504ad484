"""lambda_grpo as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="GRPO is Secretly a Process Reward Model (lambda-GRPO; tiny-LM library `tasks/lm`)",
    pipeline="GRPO vs lambda-GRPO",
    nightly="50 5 * * *",
    commands={
        "lambda-grpo": Command("app", "GRPO vs lambda-GRPO: process sets and token weights of your own groups; "
                                      "runs on chain arithmetic."),
    },
)
