"""Point-cloud surrogates of the flow around a 2D body (spec §3.2, §3.3, §4): samples and their
standardisation, point features, the shared heads, the Transolver and PointNet baselines, gradient-boosted
trees on the generator parameters, Modality-Protected Learning, training and bootstrap R^2 intervals.
A paper builds its own networks (training takes a ModelBuilder) and reads its own data set into samples."""
