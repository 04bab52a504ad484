"""LiMuon (Light and Fast Muon Optimizer for Large Models; Huang, Luo, Chen, ICML 2026): stages/limuon/README.md.

params       the typed params of one profile (stages/limuon/params.yaml)
experiments  the variants (muon, muon2x, adamw, limuon1, limuon2_r<k>, muonpp) and one run per (task, variant, seed)
claims       claims C1 memory, C2 mat-ls, C3 char-LM, and the summary numbers
plots        loss curves, estimator error, state sizes, compression error
pipeline     the stages as Prefect flows (generate, calibrate: Muon's and AdamW's LR, train, evaluate)
"""
