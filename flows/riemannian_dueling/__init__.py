"""riemannian_dueling: Riemannian Dueling Optimization (Ren, Roy, Ma; ICML 2026).

RDNGD, RRDNGD and RDFW (tasks/comparison/dueling.py) against RZO, pymanopt's RGD and Euclidean dueling NGD on E1
(Rayleigh quotient on the sphere), E2 (Karcher mean on SPD; RRDNGD) and E3 (RDFW on the simplex, interior and boundary
optimum) (stages/riemannian_dueling/README.md).

- params.py: the typed Params of stages/riemannian_dueling/params.yaml.
- experiments.py: every method on one instance, traced by the true objective.
- runs_io.py: the per-run npz files.
- summaries.py: the per-seed numbers the claims read.
- claims.py: C1-C4 and the reports R5-R7.
- plots.py: gap traces, B(n), the RDFW rate (both E3 targets).
- pipeline.py: the Prefect flows generate, solve, evaluate (`STAGES`).
- cli.py: `papers riemannian-dueling minimize MODULE:FUNCTION`.
"""
