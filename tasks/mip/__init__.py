"""Learned early stopping for MIP solvers (SCIP via pyscipopt) with a conformal guarantee."""
