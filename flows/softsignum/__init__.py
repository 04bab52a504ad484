"""SoftSignum / SoftMuon (SoftSign: Smooth Sign in Your Optimizer; ICML 2026): stages/softsignum/README.md.

params       the typed params of one profile (stages/softsignum/params.yaml)
variants     the optimizer names: the methods and the controls of SoftSignum's clamp (hardswitch_x20, softsignum_unclamped)
experiments  one (task, optimizer, seed) run: quad-het, mat-het, the shared char-LM runner; the clamp's use per run
claims       claims C1-C3 with their controls, and the pre-transition coincidence check
plots        evaluation curves and temperature traces
pipeline     the stages as Prefect flows (generate, calibrate, train, evaluate)
"""
