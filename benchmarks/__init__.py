"""Performance benchmarks: JSON results under benchmarks/results/, ratios measured in one run."""
