"""The federated loop: determinism, decoupling, reductions, empty clients (spec §10.4, §10.6-7)."""
from __future__ import annotations

import numpy as np
import pytest

from flows.fedcdwa.config import FedConfig
from flows.fedcdwa.data import Federation, digits_federation, digits_partition
from flows.fedcdwa.engine import result_record, run_inprocess
from tasks.federated.local import ClientData

SMALL = dict(rounds=2, local_epochs=1, personal_epochs=1)


@pytest.fixture(scope="module")
def federation() -> Federation:
    return digits_federation(digits_partition(3, 0.5, 0))


def run(federation, **changes) -> dict:
    return result_record(run_inprocess(FedConfig(**(SMALL | changes)), federation, 7))


def test_same_seed_same_numbers(federation):
    a, b = run(federation), run(federation)
    assert a["weights_sha256"] == b["weights_sha256"] and a["history"] == b["history"]
    assert a["personal_by_client"] == b["personal_by_client"]
    assert 0 < a["global_accuracy"] <= 1 and np.isfinite(a["history"]["inter_class_ratio"]).all()


def test_decoupling_personal_branch_never_touches_global(federation):
    base, other = run(federation), run(federation, lam_kd=5.0, lam_pm=1.0, personal_epochs=2)
    assert base["weights_sha256"] == other["weights_sha256"]
    assert base["history"]["global_accuracy"] == other["history"]["global_accuracy"]
    assert base["personal_by_client"] != other["personal_by_client"]


def test_reduces_to_fedavg_without_pvda_and_server_step(federation):
    cdwa = run(federation, lam_gm=0.0, lam_gv=0.0, server_steps=0)
    fedavg = run(federation, method="fedavg")
    assert cdwa["weights_sha256"] == fedavg["weights_sha256"]
    assert cdwa["global_accuracy"] == fedavg["global_accuracy"]


def test_empty_client_is_skipped(federation):
    empty = ClientData(np.zeros((0, 64), np.float32), np.zeros(0, np.int64), np.zeros((0, 64), np.float32),
                       np.zeros(0, np.int64))
    with_empty = Federation(federation.clients + [empty], federation.test_x, federation.test_y, 10)
    for method in ("fedavg", "fedcdwa", "fedproto"):
        a = run(federation, method=method)
        b = run(with_empty, method=method)
        assert a["global_accuracy"] == b["global_accuracy"] and a["bytes_up_per_round"] == b["bytes_up_per_round"]


def test_every_method_runs_and_counts_bytes(federation):
    rows = {m: run(federation, method=m) for m in ("fedavg", "fedavg_ft", "fedproto", "local", "fedcdwa")}
    assert rows["fedavg_ft"]["global_accuracy"] == rows["fedavg"]["global_accuracy"]  # the same training
    # local-only sends its sample count alone
    assert rows["local"]["bytes_up_per_round"] == 8 * 3 and rows["fedproto"]["bytes_up_per_round"] > 0
    assert rows["fedcdwa"]["bytes_up_per_round"] > rows["fedavg"]["bytes_up_per_round"]
    # FedCDWA's extra upload: counts, prototypes, stds, sub-prototypes and masses (spec §3.7) + the PVDA scalar
    C, D, J = 10, 32, 3
    extra = (C * 8 + 4 * C * (J * (D + 1) + 2 * D) + 8) * 3  # 3 clients, int64 counts, float32 rest, one float64
    assert rows["fedcdwa"]["bytes_up_per_round"] - rows["fedavg"]["bytes_up_per_round"] == extra
    assert all(0 <= r["personal_accuracy"] <= 1 for r in rows.values())
