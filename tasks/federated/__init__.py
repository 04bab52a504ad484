"""Federated-learning building blocks any paper can use: label-skewed client splits, parameter averaging,
Wasserstein barycenters of client measures, a small k-means for client summaries, a launcher of Flower's
deployment runtime (SuperLink and SuperNodes as local processes), and the parts of a federated method: the
messages clients and server exchange, local training, the `Method` type (client update, server update,
personalisation) and the FedAvg, FedAvg-FT, FedProto and local-only baselines built on it."""
