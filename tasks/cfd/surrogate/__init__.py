"""UniDrag's surrogates (spec unidrag §3.2, §3.3, §4): point features, the UniDrag network and its
baselines (Transolver, PointNet, gradient-boosted trees), Modality-Protected Learning, training."""
