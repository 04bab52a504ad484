"""limuon as the project lists it (see flows/declaration.py)."""
from flows.declaration import Paper

PAPER = Paper(
    title="LiMuon: Light and Fast Muon Optimizer for Large Models",
    pipeline="LiMuon",
    nightly="20 4 * * *",
)
