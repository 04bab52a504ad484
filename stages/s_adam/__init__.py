"""S-Adam (singularity-aware Adam): dvc.yaml, params.yaml and README of its pipeline."""
