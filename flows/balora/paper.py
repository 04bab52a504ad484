"""balora as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="Balanced LoRA: Removing Parameter Invariance to Accelerate Convergence (BaLoRA)",
    pipeline="balanced LoRA (BaLoRA)",
    nightly="55 5 * * *",
    commands={
        "balora": Command("app", "Balanced LoRA (BaLoRA) vs LoRA fine-tuning of your saved tiny LM on your text."),
    },
)
