"""Sets of elements (point clouds, pixel sets): weighted permutation-invariant encoders, the capped simplex,
element corruptions, sliced-Wasserstein distances between weighted sets, generated set datasets and readers."""
