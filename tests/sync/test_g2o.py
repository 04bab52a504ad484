"""Tests for the g2o pose-graph reader/writer."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tasks.core.inputs import InputError
from tasks.sync import g2o
from tasks.sync.g2o import MAX_ABS_VALUE, G2OFormatError, check_connected, read_g2o, write_g2o
from tasks.sync.graph import PoseGraph, Poses

INFO = " ".join(["1", "0", "0", "0", "0", "0", "1", "0", "0", "0", "0", "1", "0", "0", "0",
                 "1", "0", "0", "1", "0", "1"])
V0 = "VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1"
V1 = "VERTEX_SE3:QUAT 1 1 0 0 0 0 0 1"
V2 = "VERTEX_SE3:QUAT 2 2 0 0 0 0 0 1"
E01 = f"EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 {INFO}"
E12 = f"EDGE_SE3:QUAT 1 2 1 0 0 0 0 0 1 {INFO}"


def _write(tmp_path, lines, name="g.g2o"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _random_problem(rng, n=7):
    R = Rotation.random(n, random_state=rng).as_matrix()
    t = rng.normal(size=(n, 3))
    T = np.tile(np.eye(4), (n, 1, 1))
    T[:, :3, :3], T[:, :3, 3] = R, t
    edges = np.array([(k, k + 1) for k in range(n - 1)] + [(0, 3), (5, 2)])
    Z = np.stack([np.linalg.inv(T[i]) @ T[j] for i, j in edges])
    return Poses(R=R, t=t), T, edges, Z


def test_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    poses, T, edges, Z = _random_problem(rng)
    ids = [10, 3, 7, 42, 0, 5, 99]
    write_g2o(tmp_path / "rt.g2o", ids, poses, edges, Z)
    g = read_g2o(tmp_path / "rt.g2o")
    assert g.vertex_ids == ids
    assert np.abs(g.T.R - poses.R).max() < 1e-12 and np.abs(g.T.t - poses.t).max() < 1e-12
    assert np.array_equal(g.graph.edges, edges) and g.graph.n == 7
    assert np.abs(g.graph.Z - Z).max() < 1e-12
    # Convention: Z_ij = T_i^{-1} T_j = G_i G_j^{-1} with G = T^{-1}.
    G = g.initial_G
    for (i, j), Zk in zip(g.graph.edges, g.graph.Z):
        Gi, Gj = np.eye(4), np.eye(4)
        Gi[:3, :3], Gi[:3, 3] = G.R[i], G.t[i]
        Gj[:3, :3], Gj[:3, 3] = G.R[j], G.t[j]
        assert np.allclose(Gi @ np.linalg.inv(Gj), Zk, atol=1e-12)


def test_quaternion_order_and_normalization(tmp_path):
    # 90 degrees about z, written unnormalized (x2): qx qy qz qw = 0 0 s s.
    q = repr(float(2 * np.sqrt(0.5)))
    path = _write(tmp_path, ["# comment", "", f"VERTEX_SE3:QUAT 0 1 2 3 0 0 {q} {q}", V1, E01])
    g = read_g2o(path)
    assert np.allclose(g.T.R[0], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    assert np.allclose(g.T.t[0], [1, 2, 3])


@pytest.mark.parametrize("lines, lineno, needle", [
    (["# header", V0, "VERTEX_SE3:QUAT 1 1 0 0 0 0 1", E01], 3, "needs 8 values"),
    ([V0, V1, f"EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 {INFO} 1"], 3, "needs 30 values"),
    ([V0, "", "VERTEX_SE3:QUAT 1 1 0 zero 0 0 0 1", E01], 3, "non-numeric value 'zero'"),
    ([V0, V1, E01.replace(" 1 0 0 0 0 1", " 1 0 0 0 0 x", 1)], 3, "non-numeric"),
    ([V0, V1, "#", E01, "EDGE_SE3:QUAT 1 7 " + E01.split(" ", 3)[3]], 5, "unknown vertex id 7"),
    ([V0, V1, "FIX 0", E01], 3, "unknown tag 'FIX'"),
    ([V0, V1, "VERTEX_SE3:QUAT 0 5 5 5 0 0 0 1", E01], 3, "duplicate vertex id 0 (first defined on line 1)"),
    ([V0, V1, E01, "EDGE_SE3:QUAT 1 0 " + E01.split(" ", 3)[3]], 4, "duplicate edge"),
    ([V0, V1, "EDGE_SE3:QUAT 1 1 " + E01.split(" ", 3)[3]], 3, "self-loop"),
    (["VERTEX_SE3:QUAT 0 0 0 0 0 0 0 0", V1, E01], 1, "zero-norm quaternion"),
    (["VERTEX_SE3:QUAT 0.5 0 0 0 0 0 0 1", V1, E01], 1, "not an integer"),
    ([V0, "VERTEX_SE3:QUAT 1 nan 0 0 0 0 0 1", E01], 2, "non-finite"),
])
def test_malformed_input_names_file_and_line(tmp_path, lines, lineno, needle):
    path = _write(tmp_path, lines, name="bad.g2o")
    with pytest.raises(G2OFormatError) as info:
        read_g2o(path)
    message = str(info.value)
    assert "bad.g2o" in message and f"line {lineno}:" in message and needle in message


@pytest.mark.parametrize("lines, lineno, needle", [
    ([V0, "VERTEX_SE3:QUAT 1 1e300 0 0 0 0 0 1", E01], 2, "x = 1e300 is over the limit of |value| <= 1e+09"),
    ([V0, V1, f"EDGE_SE3:QUAT 0 1 1 0 -2e9 0 0 0 1 {INFO}"], 3, "z = -2e9 is over the limit"),
    ([V0, "VERTEX_SE3:QUAT 1 0 0 0 0 0 1e200 1", E01], 2, "qz = 1e200"),
    ([V0, "VERTEX_SE3:QUAT 1 0 0 0 0 0 0 inf", E01], 2, "non-finite value 'inf'"),
])
def test_absurd_magnitudes_are_refused_not_propagated(tmp_path, lines, lineno, needle):
    path = _write(tmp_path, lines, name="far.g2o")
    with pytest.raises(G2OFormatError) as info:
        read_g2o(path)
    assert f"far.g2o, line {lineno}: {needle}" in str(info.value)


def test_a_translation_at_the_limit_is_read(tmp_path):
    g = read_g2o(_write(tmp_path, [V0, "VERTEX_SE3:QUAT 1 1e9 0 0 0 0 0 1", E01]))
    assert g.T.t[1, 0] == MAX_ABS_VALUE == 1e9


def test_vertex_and_edge_counts_are_limited(tmp_path, monkeypatch):
    monkeypatch.setattr(g2o, "MAX_VERTICES", 2)
    with pytest.raises(G2OFormatError, match="line 3: more than the limit of 2 vertices"):
        read_g2o(_write(tmp_path, [V0, V1, V2, E01, E12]))
    monkeypatch.setattr(g2o, "MAX_VERTICES", 3)
    monkeypatch.setattr(g2o, "MAX_EDGES", 1)
    with pytest.raises(G2OFormatError, match="line 5: more than the limit of 1 edges"):
        read_g2o(_write(tmp_path, [V0, V1, V2, E01, E12]))


def test_binary_and_missing_files_are_input_errors(tmp_path):
    (tmp_path / "blob.g2o").write_bytes(bytes(range(256)))
    with pytest.raises(InputError, match=r"pose graph .*blob\.g2o: a binary file"):
        read_g2o(tmp_path / "blob.g2o")
    with pytest.raises(InputError, match="no such file"):
        read_g2o(tmp_path / "missing.g2o")
    assert issubclass(G2OFormatError, InputError)


def test_duplicate_edge_names_both_lines(tmp_path):
    path = _write(tmp_path, [V0, V1, V2, E01, E12, E01])
    with pytest.raises(G2OFormatError, match=r"line 6: duplicate edge .*first given on line 4"):
        read_g2o(path)


def test_edges_may_precede_vertices(tmp_path):
    g = read_g2o(_write(tmp_path, [E01, V1, V0]))
    assert g.vertex_ids == [1, 0] and g.graph.edges.tolist() == [[1, 0]]


def test_disconnected_graph_is_reported(tmp_path):
    path = _write(tmp_path, [V0, V1, V2, "VERTEX_SE3:QUAT 3 0 0 0 0 0 0 1", E01],
                  name="split.g2o")
    with pytest.raises(G2OFormatError, match=r"split\.g2o: graph is disconnected: 3 components "
                                             r"\(sizes 2, 1, 1\)"):
        read_g2o(path)
    g = read_g2o(path, require_connected=False)
    with pytest.raises(G2OFormatError, match="disconnected"):
        check_connected(g.graph, path)
    check_connected(PoseGraph(n=2, edges=np.array([[0, 1]]), Z=np.eye(4)[None]), path)


def test_empty_file(tmp_path):
    with pytest.raises(G2OFormatError, match="no VERTEX_SE3:QUAT"):
        read_g2o(_write(tmp_path, ["# nothing"]))


def test_write_validates(tmp_path):
    poses, _, edges, Z = _random_problem(np.random.default_rng(1))
    with pytest.raises(ValueError, match="unique"):
        write_g2o(tmp_path / "w.g2o", [0, 0, 1, 2, 3, 4, 5], poses, edges, Z)
    with pytest.raises(ValueError, match="node indices"):
        write_g2o(tmp_path / "w.g2o", range(7), poses, edges + 1, Z)
