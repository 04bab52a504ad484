"""SPS_safe (safeguarded stochastic Polyak steps): dvc.yaml, params.yaml and README."""
