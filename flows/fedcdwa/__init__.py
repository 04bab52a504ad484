"""fedcdwa: FedCDWA, decoupled federated prototype distillation with Hierarchical Wasserstein Aggregation (ICML 2026,
abstract only; the method is our reconstruction, described in stages/fedcdwa/README.md).

- config.py: FedConfig, one run's settings (spec §3.6 defaults), built by params.py and cli.py; variants.py: the
  ablations.
- model.py, losses.py (PVDA, distillation).
- client.py / server.py: FedCDWA's pure client and server functions; hwa.py: Hierarchical Wasserstein Aggregation
  over POT's free-support barycenter. The baselines (FedAvg, FedAvg-FT, FedProto, local-only) are
  tasks/federated's; methods.py: the table of every method a run can name.
- engine.py: the federated loop over a transport; the in-process transport (smoke/default).
- flower.py + flower_app/: the same functions as a Flower ServerApp/ClientApp on the deployment runtime;
  flower_job.py: that App and a run's files for a real multi-machine SuperLink (`papers fedcdwa flower-job`).
- data.py: the digits federation (Dirichlet label skew) and a user's per-client CSV folder.
- params.py, pipeline.py (generate, train, evaluate), summaries.py, claims.py, plots.py, cli.py.
"""
