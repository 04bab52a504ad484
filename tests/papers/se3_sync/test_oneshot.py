"""The one-shot path: the compiled kernels come from the ahead-of-time build when it is there (numba not even
imported), else from numba's JIT, and both builds compute what the numpy reference computes; the timing runs
alternate the methods round by round."""
from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from tasks.sync import aot, native, timing
from tasks.sync.dq_operator import build_operator, gpm_numpy, power_numpy
from tasks.sync.generators import geometric, slam_chain
from tasks.sync.graph import Poses, SyncResult
from tasks.sync.measurement import measurement_dqs
from tasks.sync.store import Instance, save_instance
from tests.conftest import ROOT


def test_numba_engine_falls_back_to_the_jit_where_the_extension_is_not_built(monkeypatch):
    monkeypatch.setattr(aot, "load", lambda: None)
    assert native.engine("numba").build == "jit" and native.engine("jit").build == "jit"
    with pytest.raises(ValueError, match="compiled engine must be one of"):
        native.engine("cuda")


def test_the_extension_name_follows_the_kernels_source(tmp_path):
    for name in ("kernels.py", "aot.py"):
        shutil.copy(aot.FOLDER / name, tmp_path / name)
    assert aot.module_name(tmp_path) == aot.module_name()
    with (tmp_path / "kernels.py").open("a") as kernels:
        kernels.write("\n# an edit\n")
    assert aot.module_name(tmp_path) != aot.module_name()  # a stale build is never loaded


def same_as_numpy(engine: native.Engine) -> None:
    """engine's measurements, power method and DQGPM against the numpy reference on an ER graph and a chain."""
    for graph, _ in (geometric(60, 0.2, 0.1, 0.1, seed=3), slam_chain(80, 0.1, 0.05, 0.05, seed=4)):
        dqs = engine.measurements(graph.n, graph.edges, graph.Z, None)
        np.testing.assert_allclose(dqs, measurement_dqs(graph), atol=1e-12)
        op = build_operator(graph.n, graph.edges, dqs)
        v0 = np.random.default_rng(0).standard_normal((graph.n, 8))
        compiled, reference = engine.power(op, v0, 1e-3, 1e-3, 300), power_numpy(op, v0, 1e-3, 1e-3, 300)
        assert compiled.iterations == reference.iterations
        np.testing.assert_allclose(compiled.projected, reference.projected, atol=1e-12)
        compiled, reference = (engine.gpm(op, reference.projected, 0.0, 1e-6, 1e-6, 50),
                               gpm_numpy(op, reference.projected, 0.0, 1e-6, 1e-6, 50))
        assert compiled.iterations == reference.iterations and compiled.converged == reference.converged
        np.testing.assert_allclose(compiled.x, reference.x, atol=1e-12)
        np.testing.assert_allclose(compiled.rotation, reference.rotation, atol=1e-12)


BUILT = aot.load() is not None


@pytest.mark.skipif(not BUILT, reason="the ahead-of-time kernels are not built (python -m tasks.sync.aot)")
def test_the_built_extension_computes_what_numpy_computes():
    engine = native.engine("numba")
    assert engine.build == "aot"
    same_as_numpy(engine)


@pytest.mark.skipif(not BUILT, reason="the ahead-of-time kernels are not built (python -m tasks.sync.aot)")
def test_a_one_shot_dqgpm_does_not_import_numba():
    script = ("import sys; from tasks.sync.generators import geometric; from tasks.sync.methods import dqgpm; "
              "r = dqgpm(geometric(30, 0.3, 0.05, 0.05, 1)[0]); print(r.info['kernels'], 'numba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["aot", "False"], done.stderr


@pytest.mark.slow
def test_an_extension_built_from_scratch_computes_what_numpy_computes(tmp_path):
    extension = aot.load_extension(aot.build(tmp_path))
    same_as_numpy(native.bind("aot", extension))


def test_rounds_rotate_which_method_runs_first():
    assert [timing.rotated(["a", "b", "c"], r) for r in range(4)] == [["a", "b", "c"], ["b", "c", "a"],
                                                                     ["c", "a", "b"], ["a", "b", "c"]]


def test_timing_alternates_the_variants_of_each_instance_family(tmp_path, monkeypatch):
    calls = []

    def fake(label):
        def run(graph, **options):
            calls.append(label)
            return SyncResult(Poses(np.zeros((graph.n, 3, 3)), np.zeros((graph.n, 3))), 1, [], len(calls), label, {})
        return run

    monkeypatch.setattr(timing, "METHODS", {"x": fake("x"), "y": fake("y"), "z": fake("z")})
    graph, truth = geometric(10, 0.5, 0.0, 0.0, seed=1)
    save_instance(tmp_path / "timing_claim_n10_t0.npz", Instance(graph, truth, {"purpose": "claim", "graph": "er", "p": 0.5}))
    variants = {"er": {"a": ("x", {}), "b": ("y", {})}, "chain": {"c": ("z", {})}}
    rows = timing.time_methods([tmp_path / "timing_claim_n10_t0.npz"], variants, 3)
    assert calls == ["x", "y"] + ["x", "y", "y", "x", "x", "y"]  # warm-up, then rounds in rotating order
    assert [(r["method"], r["times"], r["p"]) for r in rows] == [("a", [3, 6, 7], 0.5), ("b", [4, 5, 8], 0.5)]
