"""The federated loop: determinism, decoupling, reductions, empty clients (spec §10.4, §10.6-7)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from flows.fedcdwa.config import FedConfig
from flows.fedcdwa.data import Federation, digits_federation, digits_partition
from flows.fedcdwa.engine import participants, result_record, run_inprocess
from flows.fedcdwa.server import distil_head, keep_server_step, teacher_weights
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
    validation = 2 * 8 + 8  # the server-step gate's reply: right predictions of 2 candidates + the split's size
    extra = (C * 8 + 4 * C * (J * (D + 1) + 2 * D) + 8 + validation) * 3  # 3 clients; int64 counts, float32 rest
    assert rows["fedcdwa"]["bytes_up_per_round"] - rows["fedavg"]["bytes_up_per_round"] == extra
    assert all(0 <= r["personal_accuracy"] <= 1 for r in rows.values())


@pytest.mark.heavy  # five short runs: ~6 s
def test_accuracies_are_means_over_the_last_rounds(federation):
    for method in ("fedcdwa", "fedproto"):
        found = run(federation, method=method, rounds=4, last_rounds=3)
        assert found["last_rounds"]["round"] == [1.0, 2.0, 3.0]
        assert found["global_accuracy"] == pytest.approx(np.mean(found["last_rounds"]["global_accuracy"]))
        assert found["personal_accuracy"] == pytest.approx(np.mean(found["last_rounds"]["personal_accuracy"]))
        assert found["personal_accuracy"] == pytest.approx(np.mean(found["personal_by_client"]))
    weights = run(federation, rounds=4, last_rounds=3)
    assert weights["last_rounds"]["global_accuracy"] == weights["history"]["global_accuracy"][1:]
    assert run(federation, rounds=2, last_rounds=5)["last_rounds"]["round"] == [0.0, 1.0]  # at most every round


def test_partial_participation_samples_clients_per_round(federation):
    cfg = FedConfig(**(SMALL | {"rounds": 6, "participation": 0.5}))
    drawn = [tuple(participants(cfg, 10, 7, t)) for t in range(6)]
    assert all(len(d) == 5 and len(set(d)) == 5 for d in drawn) and len(set(drawn)) > 1
    assert drawn == [tuple(participants(cfg, 10, 7, t)) for t in range(6)]  # seeded
    assert participants(cfg.model_copy(update={"participation": 1.0}), 10, 7, 0) == list(range(10))
    assert participants(cfg.model_copy(update={"participation": 0.01}), 10, 7, 0).__len__() == 1
    a, b = run(federation, participation=0.34), run(federation, participation=0.34)
    assert a["history"]["participants"] == [1.0, 1.0] and a["weights_sha256"] == b["weights_sha256"]
    assert a["bytes_up_per_round"] < run(federation)["bytes_up_per_round"]


def test_teachers_weigh_by_their_count_of_the_class():
    weights = teacher_weights(np.array([[2, 0, 5], [6, 4, 0]]), np.array([0, 1]))
    assert weights.numpy().tolist() == [[0.25, 0.0], [0.75, 1.0]]


def test_a_head_that_never_saw_a_class_does_not_teach_it(federation):
    cfg = FedConfig(**SMALL)
    rng = np.random.default_rng(0)
    head = lambda: {"head.weight": rng.normal(size=(10, 32)).astype(np.float32),  # noqa: E731
                    "head.bias": rng.normal(size=10).astype(np.float32)}
    stats = aggregate_statistics(np.array([[5] * 10]), rng)
    global_head, teacher, stranger = head(), head(), head()
    alone, _ = distil_head(cfg, global_head, [teacher], np.array([[5] * 10]), stats, torch.Generator().manual_seed(0))
    with_stranger, _ = distil_head(cfg, global_head, [teacher, stranger], np.array([[5] * 10, [0] * 10]), stats,
                                   torch.Generator().manual_seed(0))
    assert all(np.array_equal(alone[k], with_stranger[k]) for k in alone)


def aggregate_statistics(counts, rng):
    from flows.fedcdwa.hwa import aggregate

    k, c, d, j = counts.shape[0], counts.shape[1], 32, 3
    return aggregate(counts, rng.normal(size=(k, c, d)), rng.random((k, c, d)) + 0.1, rng.normal(size=(k, c, j, d)),
                     np.full((k, c, j), 1 / 3), 3, np.random.default_rng(0))


@pytest.mark.parametrize(("found", "gate", "kept"), [
    ([0.80, 0.79], True, False),  # the step lowers validation accuracy: dropped
    ([0.80, 0.80], True, True),   # no lower: kept
    (None, True, True),           # no validation split this round: kept, unchecked
    ([0.80, 0.10], False, True),  # gate off: the spec's ungated step
])
def test_server_step_kept_only_if_validation_does_not_drop(found, gate, kept):
    asked = []
    validate = lambda candidates: asked.append(candidates) or found  # noqa: E731
    cfg = FedConfig(gate_server_step=gate)
    decision, info = keep_server_step(cfg, {"a": np.zeros(1)}, {"a": np.ones(1)}, validate)
    assert decision is kept and info["server_step_kept"] == float(kept)
    assert len(asked) == (1 if gate else 0)


def test_gate_decisions_in_a_run(federation):
    """An aggressive server step (the spec's warning, §3.4): each round keeps it only where the clients' validation
    accuracy does not drop; a dropped step leaves the averaged model (its test accuracy = the one before the step)."""
    harmful = dict(rounds=3, server_lr=10.0, server_steps=30, kappa=10.0)  # the spec's collapse, exaggerated
    found = run(federation, **harmful)
    history = found["history"]
    assert 0.0 in history["server_step_kept"]  # the gate did drop a step here
    for kept, before, after, test_before, test_after in zip(
            history["server_step_kept"], history["validation_accuracy_before_server_step"],
            history["validation_accuracy_after_server_step"], history["global_accuracy_before_server_step"],
            history["global_accuracy"]):
        assert kept == float(after >= before)
        if not kept:
            assert test_after == test_before
    off = run(federation, **harmful, gate_server_step=False)
    assert off["history"]["server_step_kept"] == [1.0, 1.0, 1.0]
    assert off["history"]["global_accuracy"] != history["global_accuracy"]
