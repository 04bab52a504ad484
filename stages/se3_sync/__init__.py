"""SE(3) synchronization: dvc.yaml, params.yaml, README and the `papers se3-sync` commands."""
