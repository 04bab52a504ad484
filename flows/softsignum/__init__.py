"""SoftSignum / SoftMuon (SoftSign: Smooth Sign in Your Optimizer): spec ../shared/papers/softsignum.md.

params    the typed params of one profile (stages/softsignum/params.yaml)
runs      one (task, optimizer, seed) run: quad-het, mat-het, the shared char-LM runner; the LR pick
claims    claims C1-C3 and the pre-transition coincidence check
plots     evaluation curves and temperature traces
pipeline  the stages as Prefect flows (generate, calibrate, train, evaluate)
"""
