"""The Flower engine: a two-client, two-round job on Flower 1.32.1's deployment runtime (a SuperLink and two
SuperNodes as processes on 127.0.0.1, free ports) gives bit-identical numbers to the in-process loop.
Slow: every message starts a ClientApp process (torch imports), ~40 s on an idle 2-core machine, minutes loaded."""
from __future__ import annotations

import pytest

from flows.fedcdwa.config import FedConfig
from flows.fedcdwa.data import digits_federation, digits_partition
from flows.fedcdwa.engine import result_record, run_inprocess
from flows.fedcdwa.flower import run_flower

pytestmark = pytest.mark.slow


@pytest.mark.timeout(900)
def test_flower_deployment_matches_inprocess(tmp_path):
    federation = digits_federation(digits_partition(2, 0.5, 0))
    cfg = FedConfig(method="fedcdwa", rounds=2, local_epochs=1, personal_epochs=1)
    ours = result_record(run_inprocess(cfg, federation, 0))
    flower = run_flower(cfg, federation, 0, workdir=tmp_path, timeout_s=600)
    assert flower["weights_sha256"] == ours["weights_sha256"]
    for key in ("global_accuracy", "personal_accuracy", "personal_by_client", "history", "bytes_up_per_round",
                "bytes_down_per_round"):
        assert flower[key] == ours[key], key
    assert (tmp_path / "deployment" / "superlink.log").exists()
