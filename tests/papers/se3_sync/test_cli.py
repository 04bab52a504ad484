"""`papers se3-sync solve` as a user runs it: g2o in, synchronized g2o out."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tasks.sync.g2o import invert_poses, read_g2o, write_g2o
from tasks.sync.generators import geometric
from tests.conftest import ROOT

PAPERS = str(Path(sys.executable).with_name("papers"))


def papers(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PAPERS, "se3-sync", "solve", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def write_graph(path: Path, sigma: float, start_at_truth: bool) -> np.ndarray:
    graph, truth_G = geometric(30, 0.3, sigma, sigma, seed=7)
    truth_T = invert_poses(truth_G)
    shift = np.random.default_rng(1).normal(size=truth_T.t.shape)
    shift[0] = 0  # vertex 0 anchors the gauge of the output, so only the others start off
    initial = truth_T if start_at_truth else type(truth_T)(truth_T.R, truth_T.t + shift)
    write_g2o(path, list(range(100, 130)), initial, graph.edges, graph.Z)
    return truth_T


@pytest.mark.parametrize("method", ["dqgpm", "spectral", "eig", "chain"])
def test_noiseless_graph_is_recovered_exactly(tmp_path, method):
    truth = write_graph(tmp_path / "in.g2o", 0.0, start_at_truth=True)
    # The default stopping rule (1e-6 per node) sits at the noise level; exact recovery asks for more.
    exact = ["--tol", "1e-12"] if method in ("dqgpm", "spectral") else []
    done = papers("--g2o", str(tmp_path / "in.g2o"), "--out", str(tmp_path / "out.g2o"), "--method", method, "--json",
                  *exact)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["vertices"] == 30 and summary["time_s"] > 0 and summary["converged"] is True
    solved = read_g2o(tmp_path / "out.g2o")
    assert solved.vertex_ids == list(range(100, 130))
    np.testing.assert_allclose(solved.T.R, truth.R, atol=1e-8)
    np.testing.assert_allclose(solved.T.t, truth.t, atol=1e-8)
    np.testing.assert_array_equal(solved.graph.edges, read_g2o(tmp_path / "in.g2o").graph.edges)


def test_noisy_graph_improves_on_a_bad_initial_guess(tmp_path):
    truth = write_graph(tmp_path / "in.g2o", 0.02, start_at_truth=False)
    done = papers("--g2o", str(tmp_path / "in.g2o"), "--out", str(tmp_path / "out.g2o"))
    assert done.returncode == 0 and "iterations" in done.stdout, done.stderr
    before = np.linalg.norm(read_g2o(tmp_path / "in.g2o").T.t - truth.t, axis=1).mean()
    after = np.linalg.norm(read_g2o(tmp_path / "out.g2o").T.t - truth.t, axis=1).mean()
    assert after < 0.1 * before


def test_malformed_file_names_the_line(tmp_path):
    bad = tmp_path / "bad.g2o"
    bad.write_text("VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1\nVERTEX_SE3:QUAT 1 0 0 x 0 0 0 1\n")
    done = papers("--g2o", str(bad), "--out", str(tmp_path / "out.g2o"))
    assert done.returncode == 2
    assert "line 2" in done.stderr and "bad.g2o" in done.stderr
    assert not (tmp_path / "out.g2o").exists()


def test_disconnected_graph_is_reported_not_solved(tmp_path):
    lines = [f"VERTEX_SE3:QUAT {i} {i} 0 0 0 0 0 1" for i in range(4)]
    info = " ".join(["1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 1 0 0 1 0 1"])
    lines += [f"EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 {info}", f"EDGE_SE3:QUAT 2 3 1 0 0 0 0 0 1 {info}"]
    path = tmp_path / "two.g2o"
    path.write_text("\n".join(lines) + "\n")
    done = papers("--g2o", str(path), "--out", str(tmp_path / "out.g2o"))
    assert done.returncode == 2 and "disconnected" in done.stderr
    assert not (tmp_path / "out.g2o").exists()


def test_unknown_method_is_refused(tmp_path):
    write_graph(tmp_path / "in.g2o", 0.0, start_at_truth=True)
    done = papers("--g2o", str(tmp_path / "in.g2o"), "--out", str(tmp_path / "o.g2o"), "--method", "sdp")
    assert done.returncode == 2 and "sdp" in done.stderr


def test_summary_reports_the_one_shot_time_and_the_kernels_that_ran(tmp_path):
    write_graph(tmp_path / "in.g2o", 0.02, start_at_truth=True)
    done = papers("--g2o", str(tmp_path / "in.g2o"), "--out", str(tmp_path / "out.g2o"), "--json", "--init", "tree")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["time_s"] >= summary["solve_s"] > 0  # the one-shot time holds the solve and the code's loading
    assert summary["kernels"] in ("aot", "jit") and summary["converged"] is True


def test_unknown_start_is_refused(tmp_path):
    write_graph(tmp_path / "in.g2o", 0.0, start_at_truth=True)
    done = papers("--g2o", str(tmp_path / "in.g2o"), "--out", str(tmp_path / "o.g2o"), "--init", "random")
    assert done.returncode == 2 and "--init" in done.stderr and "random" in done.stderr
    assert "Traceback" not in done.stderr
