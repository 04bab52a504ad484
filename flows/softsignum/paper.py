"""softsignum as the project lists it (see flows/declaration.py)."""
from flows.declaration import Paper

PAPER = Paper(
    title="SoftSign: Smooth Sign in Your Optimizer (SoftSignum / SoftMuon)",
    pipeline="SoftSignum / SoftMuon",
    nightly="0 4 * * *",
)
