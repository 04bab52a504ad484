"""Black-box optimisation: BBOB test functions through IOH (bbob.py) and population-based optimisers that record
their per-generation populations and search distributions (teachers.py: CMA-ES from `cma`, DE/rand/1/bin from
scipy, PSO and JADE written here)."""
