"""The DQ operator and its two engines: the numba kernels equal the numpy reference, the per-node
stopping rule is recorded, and a run that hits max_iter says so."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.sync.dq_operator import build_operator, gpm_numpy, node_changes, power_numpy
from tasks.sync.generators import additive, geometric, slam_chain
from tasks.sync.kernels import gpm_numba, power_numba
from tasks.sync.measurement import build_measurement_matrix, dq_matvec, measurement_dqs
from tasks.sync.methods import dq_spectral, dqgpm
from tasks.sync.store import load_result, save_result

GRAPHS = {
    "er": lambda: geometric(60, 0.2, 0.1, 0.1, seed=21),
    "dense": lambda: geometric(30, 1.0, 0.05, 0.05, seed=22),
    "additive": lambda: additive(50, 0.3, 0.05, seed=23),
    "chain": lambda: slam_chain(80, 0.1, 0.02, 0.02, seed=24),
}


def operator(case):
    graph, _ = GRAPHS[case]()
    return build_operator(graph.n, graph.edges, measurement_dqs(graph)), graph


@pytest.mark.parametrize("case", GRAPHS)
def test_fused_matvec_equals_the_three_real_matvecs(case):
    op, graph = operator(case)
    x = np.random.default_rng(0).standard_normal((graph.n, 8))
    C_s, C_d = build_measurement_matrix(graph.n, graph.edges, measurement_dqs(graph))
    assert np.allclose(op.matvec(x), dq_matvec(C_s, C_d, x), atol=1e-12, rtol=0)


@pytest.mark.parametrize("case", GRAPHS)
def test_numba_power_method_equals_numpy(case):
    op, graph = operator(case)
    v0 = np.random.default_rng(1).standard_normal((graph.n, 8))
    ref, fast = power_numpy(op, v0, 1e-9, 1e-9, 300), power_numba(op, v0, 1e-9, 1e-9, 300)
    assert (fast.iterations, fast.converged) == (ref.iterations, ref.converged)
    assert np.abs(fast.x - ref.x).max() < 1e-12 and np.abs(fast.projected - ref.projected).max() < 1e-12
    assert np.allclose(fast.rotation, ref.rotation, atol=1e-12, rtol=0)
    assert np.allclose(fast.translation, ref.translation, atol=1e-12, rtol=0)


@pytest.mark.parametrize("shift", [0.0, 2.0])
@pytest.mark.parametrize("case", GRAPHS)
def test_numba_gpm_equals_numpy(case, shift):
    op, graph = operator(case)
    x0 = power_numpy(op, np.random.default_rng(2).standard_normal((graph.n, 8)), 1e-3, 1e-3, 300).projected
    ref, fast = gpm_numpy(op, x0, shift, 1e-9, 1e-9, 150), gpm_numba(op, x0, shift, 1e-9, 1e-9, 150)
    assert (fast.iterations, fast.converged) == (ref.iterations, ref.converged)
    assert np.abs(fast.x - ref.x).max() < 1e-12
    assert np.allclose(fast.rotation, ref.rotation, atol=1e-12, rtol=0)


@pytest.mark.parametrize("case", ["er", "additive"])
def test_methods_agree_across_engines(case):
    graph, _ = GRAPHS[case]()
    for method in (dqgpm, dq_spectral):
        a, b = method(graph, engine="numpy"), method(graph, engine="numba")
        assert a.iterations == b.iterations and a.converged == b.converged
        assert np.abs(a.info["dq"] - b.info["dq"]).max() < 1e-12


def test_per_node_stopping_rule_is_recorded():
    graph, _ = geometric(80, 0.15, 0.1, 0.1, seed=25)
    op = build_operator(graph.n, graph.edges, measurement_dqs(graph))
    result = dqgpm(graph, rot_tol=1e-7, trans_tol=1e-5)
    rot, trans = result.history, result.info["translation_history"]
    assert result.converged and result.iterations == len(rot) == len(trans)
    assert rot[-1] <= 1e-7 and trans[-1] <= 1e-5 * op.scale
    assert rot[-2] > 1e-7 or trans[-2] > 1e-5 * op.scale  # it stopped at the first iteration the rule held
    assert result.info["final_change"] == {"rotation": rot[-1], "translation": trans[-1]}
    # The recorded change is the largest per-node change, in the problem's units.
    x = result.info["dq"]
    again = dqgpm(graph, rot_tol=1e-7, trans_tol=1e-5, x0=x, max_iter=1)
    assert again.history[0] == pytest.approx(node_changes(again.info["dq"], x)[0], abs=1e-15)


def test_chain_that_hits_max_iter_says_so(tmp_path):
    graph, _ = slam_chain(300, 0.1, 0.02, 0.02, seed=26)
    for init in ("spectral", "tree"):
        result = dqgpm(graph, init=init, max_iter=20)
        assert result.iterations == 20 and result.converged is False
        assert "max_iter=20 without converging" in result.message
        assert result.history[-1] > 1e-6 or result.info["translation_history"][-1] > 1e-6
        save_result(tmp_path / "r.npz", result)
        loaded = load_result(tmp_path / "r.npz")
        assert loaded.converged is False and loaded.message == result.message
    spectral = dq_spectral(graph, max_iter=20)
    assert spectral.converged is False and "power method stopped at max_iter=20" in spectral.message


def test_tree_start_recovers_noiseless_poses():
    graph, truth = slam_chain(50, 0.1, 0.0, 0.0, seed=27)
    result = dqgpm(graph, init="tree", rot_tol=1e-12, trans_tol=1e-12, max_iter=1000)
    assert result.converged and result.info["init"] == "tree" and result.info["power_iterations"] == 0
    from tasks.sync.metrics import pose_errors

    rot, trans = pose_errors(result.poses, truth)
    assert rot.max() < 1e-6 and trans.max() < 1e-8


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_engines_are_deterministic(engine):
    graph, _ = slam_chain(100, 0.1, 0.05, 0.05, seed=28)
    a, b = dqgpm(graph, engine=engine, max_iter=50), dqgpm(graph, engine=engine, max_iter=50)
    assert np.array_equal(a.info["dq"], b.info["dq"]) and a.history == b.history


def test_slam_chain_graph():
    graph, truth = slam_chain(100, 0.1, 0.0, 0.0, seed=29)
    assert len(graph.edges) == 99 + 10 and np.all(graph.edges[:, 0] < graph.edges[:, 1])
    assert np.array_equal(graph.edges[:99], np.column_stack([np.arange(99), np.arange(1, 100)]))
    assert np.all(graph.edges[99:, 1] - graph.edges[99:, 0] >= 2)
    again, _ = slam_chain(100, 0.1, 0.0, 0.0, seed=29)
    assert np.array_equal(graph.Z, again.Z)
    with pytest.raises(ValueError, match="engine"):
        dqgpm(graph, engine="cuda")


@pytest.mark.parametrize("case", GRAPHS)
def test_numba_measurements_equal_numpy(case):
    from tasks.sync.dualquat import dq_from_matrix
    from tasks.sync.kernels import measurement_dqs_numba, udq_from_matrices

    graph, _ = GRAPHS[case]()
    assert np.abs(udq_from_matrices(graph.Z) - dq_from_matrix(graph.Z)).max() < 1e-15
    fast = measurement_dqs_numba(graph.n, graph.edges, graph.Z, graph.dq)
    assert np.abs(fast - measurement_dqs(graph)).max() < 1e-15
    signs = np.where(np.random.default_rng(30).random(len(fast)) < 0.5, -1.0, 1.0)
    flipped = measurement_dqs_numba(graph.n, graph.edges, graph.Z, signs[:, None] * dq_from_matrix(graph.Z)
                                    if graph.dq is None else signs[:, None] * graph.dq)
    assert np.array_equal(flipped, fast) if graph.dq is not None else np.abs(flipped - fast).max() < 1e-15
    with pytest.raises(ValueError, match="disconnected"):
        measurement_dqs_numba(graph.n + 1, graph.edges, graph.Z, graph.dq)
