"""metadistill as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="MetaDistill: Unlocking the Performance Ceiling for Pretrained Optimizers",
    pipeline="MetaDistill learned-optimiser distillation",
    nightly="40 5 * * *",
    commands={
        "metadistill": Command("app", "Minimise your own black-box function with a distilled learned optimiser (LES)."),
    },
)
