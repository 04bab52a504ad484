"""Quantum combinatorial optimisation: QAOA on small graphs, QAOA^2 divide and conquer, Neural QAOA^2."""
