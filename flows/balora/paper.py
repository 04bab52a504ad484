"""balora as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper, Stage

PAPER = Paper(
    title="Balanced LoRA: Removing Parameter Invariance to Accelerate Convergence (BaLoRA)",
    pipeline="balanced LoRA (BaLoRA)",
    nightly="55 5 * * *",
    stages=(
        Stage("generate", outputs=("generate",)),
        Stage("train", inputs=("generate",), outputs=("train",)),
        Stage("solve", inputs=("generate", "train"), outputs=("solve",)),
        Stage("evaluate", inputs=("solve",), committed=("summary.json",), plots=("plots",), claims=True),
    ),
    command=Command("app", "Balanced LoRA (BaLoRA) vs LoRA fine-tuning of your saved tiny LM on your text."),
)
