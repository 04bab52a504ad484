"""The shared task library: algorithms and baselines by domain, free of orchestration."""
