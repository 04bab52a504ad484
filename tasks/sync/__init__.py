"""SE(3) synchronization: dual-quaternion algebra, DQGPM and its baselines, data generators."""
