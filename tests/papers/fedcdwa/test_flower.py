"""The Flower engine in CI: a one-round, two-client FedCDWA job on Flower 1.32.1's deployment runtime (a SuperLink
and two SuperNodes as processes on 127.0.0.1, free ports) gives the in-process loop's numbers on the same seed,
bit for bit (tolerance 0: the same final weights' sha256, accuracies, per-round history and bytes). Every message
starts a ClientApp process (torch imports): train, validate (the server-step gate) and personalise, one after the
other on each node. Measured 78-92 s on our shared 2-core machine at load average 8-9 (four runnable processes per
core; the in-process run of the same job took 6.6 s there); estimated 20-30 s on an idle 2-core machine (not
measured: none was free). The timeout below only guards against a hung deployment."""
from __future__ import annotations

import pytest

from flows.fedcdwa.config import FedConfig
from flows.fedcdwa.data import digits_federation, digits_partition
from flows.fedcdwa.engine import result_record, run_inprocess
from flows.fedcdwa.flower import run_flower

pytestmark = pytest.mark.heavy
HUNG_S = 240


@pytest.mark.timeout(HUNG_S + 60)
def test_flower_deployment_matches_inprocess(tmp_path):
    federation = digits_federation(digits_partition(2, 0.5, 0))
    cfg = FedConfig(method="fedcdwa", rounds=1, local_epochs=1, personal_epochs=1)
    ours = result_record(run_inprocess(cfg, federation, 0))
    flower = run_flower(cfg, federation, 0, workdir=tmp_path, timeout_s=HUNG_S)
    assert flower["weights_sha256"] == ours["weights_sha256"]
    for key in ("global_accuracy", "personal_accuracy", "personal_by_client", "history", "last_rounds",
                "bytes_up_per_round", "bytes_down_per_round"):
        assert flower[key] == ours[key], key
    assert "validation_accuracy_after_server_step" in flower["history"]  # the gate's exchange crossed Flower
    assert (tmp_path / "deployment" / "superlink.log").exists()
