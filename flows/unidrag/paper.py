"""unidrag as the project lists it (see flows/declaration.py)."""
from flows.declaration import Command, Paper

PAPER = Paper(
    title="UniDrag: multi-field aerodynamic prediction and robust shape optimization",
    pipeline="UniDrag CFD data and solver validation",
    nightly="0 1 * * *",
    commands={
        "cfd": Command("app", "Lattice-Boltzmann solver validation cases."),
        "unidrag": Command("unidrag_app", "Drag of your own vehicle mesh with the trained UniDrag surrogate: predict it, or "
                                          "minimise it by a small FFD deformation (optionally verified by the LBM)."),
    },
)
