"""Federated-learning building blocks any paper can use: label-skewed client splits, parameter averaging,
Wasserstein barycenters of client measures, a small k-means for client summaries, and a launcher of Flower's
deployment runtime (SuperLink and SuperNodes as local processes)."""
