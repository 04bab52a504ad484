"""Every method a fedcdwa run can name (config.MethodName), each declared once: the generic baselines of
tasks/federated and FedCDWA, which keeps FedAvg's global model and averaging under its own client and server steps."""
from __future__ import annotations

from tasks.federated.fedavg import FEDAVG, FEDAVG_FT
from tasks.federated.fedproto import FEDPROTO, LOCAL_ONLY
from tasks.federated.method import Method

from . import client, server

FEDCDWA = Method(own_models=False, client_update=client.global_branch, server_update=server.aggregate,
                 personalize=client.personal_branch)

METHODS: dict[str, Method] = {"fedavg": FEDAVG, "fedavg_ft": FEDAVG_FT, "fedproto": FEDPROTO, "local": LOCAL_ONLY,
                              "fedcdwa": FEDCDWA}
