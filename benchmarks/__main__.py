"""`python -m benchmarks` (or `make benchmark`): every benchmark, JSON under benchmarks/results/."""
from . import orchestration, se3_sync_speed

if __name__ == "__main__":
    se3_sync_speed.main()
    orchestration.main()
