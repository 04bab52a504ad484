"""Read and write SE(3) pose graphs in the g2o SLAM text format.

Lines understood (anything else is an error, so a file is never half-read in silence):

    VERTEX_SE3:QUAT id x y z qx qy qz qw
    EDGE_SE3:QUAT   i j x y z qx qy qz qw  I11 I12 .. I16 I22 .. I66   (21 upper-triangular)

Blank lines and lines starting with '#' are skipped. The information matrix is checked to be
numeric and then ignored (our methods are unweighted); `write_g2o` writes the identity.

Convention (why G = T^{-1}). A g2o vertex pose T_v maps node coordinates to world coordinates,
and an edge (i, j) measures the pose of j in the frame of i: T_i^{-1} T_j. Our model (spec §2)
is Z_ij ~ G_i G_j^{-1}; with G_i = T_i^{-1} the two coincide, so an edge measurement is used
as Z_ij unchanged, and solutions G_i are reported as T_i = G_i^{-1}.

Quaternions are g2o's (qx, qy, qz, qw), which is scipy's scalar-last order. Non-unit
quaternions are normalized; a zero (or non-finite) one is an error.

Limits (a user's file is refused, never half-solved): pose values above MAX_ABS_VALUE in
magnitude (a translation of 1e300 overflows every product the methods form), more than
MAX_VERTICES vertices or MAX_EDGES edges, binary or oversized files.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from tasks.core.inputs import InputError, read_text
from tasks.sync.graph import PoseGraph, Poses, connected_components

VERTEX_TAG = "VERTEX_SE3:QUAT"
EDGE_TAG = "EDGE_SE3:QUAT"
VERTEX_FIELDS = 1 + 1 + 7  # tag, id, x y z qx qy qz qw
EDGE_FIELDS = 1 + 2 + 7 + 21  # tag, i j, pose, information upper triangle
_IDENTITY_INFORMATION = " ".join("1" if c == r else "0" for r in range(6) for c in range(r, 6))
MAX_ABS_VALUE = 1e9  # translations and quaternion components: |value| <= 1e9 (squares stay far from overflow)
MAX_VERTICES = 1_000_000
MAX_EDGES = 5_000_000


class G2OFormatError(InputError):
    """A g2o file that cannot be read as a pose graph; the message names file, line and fault."""


@dataclass(frozen=True)
class G2OGraph:
    """A g2o pose graph.

    vertex_ids: the file's vertex ids in file order; node k of `graph` is vertex_ids[k].
    T: (n) vertex poses as written in the file (node -> world), the initial estimate.
    graph: PoseGraph over nodes 0..n-1, edges in file order, Z[k] = T_i^{-1} T_j measured
        = G_i G_j^{-1} with G = T^{-1}.
    lines: (m,) 1-based line number of each edge in the file, for error messages downstream.
    """

    vertex_ids: list[int]
    T: Poses
    graph: PoseGraph
    lines: np.ndarray

    @property
    def initial_G(self) -> Poses:
        """The file's initial estimate in our convention, G_i = T_i^{-1}."""
        return invert_poses(self.T)


def invert_poses(poses: Poses) -> Poses:
    """(R, t) -> (R^T, -R^T t) for every pose."""
    R_inv = np.transpose(poses.R, (0, 2, 1))
    return Poses(R=R_inv, t=-np.einsum("nab,nb->na", R_inv, poses.t))


def _fail(path, lineno: int, what: str) -> G2OFormatError:
    return G2OFormatError(f"{path}, line {lineno}: {what}")


def _pose_from_fields(fields: list[str], path, lineno: int) -> np.ndarray:
    """x y z qx qy qz qw (strings) -> 4x4 homogeneous matrix."""
    values = _floats(fields, path, lineno)
    big = np.flatnonzero(np.abs(values) > MAX_ABS_VALUE)
    if big.size:
        name = ("x", "y", "z", "qx", "qy", "qz", "qw")[big[0]]
        raise _fail(path, lineno, f"{name} = {fields[big[0]][:40]} is over the limit of |value| <= {MAX_ABS_VALUE:g} "
                                  "(rescale the map)")
    q = values[3:7]
    norm = float(np.linalg.norm(q))
    if norm == 0.0:
        raise _fail(path, lineno, f"zero-norm quaternion (qx qy qz qw) = {fields[3:7]}")
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat(q / norm).as_matrix()  # scipy: scalar-last, like g2o
    T[:3, 3] = values[:3]
    return T


def _floats(fields: list[str], path, lineno: int) -> np.ndarray:
    out = np.empty(len(fields))
    for k, token in enumerate(fields):
        try:
            out[k] = float(token)
        except ValueError:
            raise _fail(path, lineno, f"non-numeric value {token[:40]!r}") from None
        if not math.isfinite(out[k]):
            raise _fail(path, lineno, f"non-finite value {token[:40]!r}")
    return out


def _vertex_id(token: str, path, lineno: int) -> int:
    try:
        return int(token)
    except ValueError:
        raise _fail(path, lineno, f"vertex id {token[:40]!r} is not an integer") from None


def read_g2o(path: str | Path, *, require_connected: bool = True) -> G2OGraph:
    """Parse a g2o file of VERTEX_SE3:QUAT / EDGE_SE3:QUAT lines into a G2OGraph.

    Nodes are re-indexed 0..n-1 in the order their vertices appear. Edges may precede the
    vertices they use; ids are resolved after the whole file is read. Raises G2OFormatError
    (file, 1-based line, fault) on: unknown tag, wrong field count, non-numeric or non-finite
    value, non-integer / duplicate / unknown vertex id, zero-norm quaternion, self-loop,
    duplicate edge (either orientation; both lines named), no vertices; and, unless
    require_connected=False, on a disconnected graph (see check_connected).
    """
    path = Path(path)
    vertex_index: dict[int, int] = {}
    vertex_line: dict[int, int] = {}
    vertex_T: list[np.ndarray] = []
    raw_edges: list[tuple[int, int, int, np.ndarray]] = []  # (line, id_i, id_j, Z)

    for lineno, line in enumerate(read_text(path, "pose graph").splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        tag = fields[0]
        if tag == VERTEX_TAG:
            if len(fields) != VERTEX_FIELDS:
                raise _fail(path, lineno, f"{tag} needs {VERTEX_FIELDS - 1} values "
                                          f"(id x y z qx qy qz qw), got {len(fields) - 1}")
            vid = _vertex_id(fields[1], path, lineno)
            if vid in vertex_index:
                raise _fail(path, lineno, f"duplicate vertex id {vid} "
                                          f"(first defined on line {vertex_line[vid]})")
            if len(vertex_T) == MAX_VERTICES:
                raise _fail(path, lineno, f"more than the limit of {MAX_VERTICES:,} vertices")
            T = _pose_from_fields(fields[2:], path, lineno)
            vertex_index[vid] = len(vertex_T)
            vertex_line[vid] = lineno
            vertex_T.append(T)
        elif tag == EDGE_TAG:
            if len(fields) != EDGE_FIELDS:
                raise _fail(path, lineno, f"{tag} needs {EDGE_FIELDS - 1} values "
                                          f"(i j x y z qx qy qz qw + 21 information), "
                                          f"got {len(fields) - 1}")
            vi = _vertex_id(fields[1], path, lineno)
            vj = _vertex_id(fields[2], path, lineno)
            if vi == vj:
                raise _fail(path, lineno, f"self-loop edge on vertex {vi}")
            Z = _pose_from_fields(fields[3:10], path, lineno)
            _floats(fields[10:], path, lineno)  # information: validated, then ignored
            if len(raw_edges) == MAX_EDGES:
                raise _fail(path, lineno, f"more than the limit of {MAX_EDGES:,} edges")
            raw_edges.append((lineno, vi, vj, Z))
        else:
            raise _fail(path, lineno, f"unknown tag {tag[:40]!r} (expected {VERTEX_TAG} "
                                      f"or {EDGE_TAG})")

    if not vertex_T:
        raise G2OFormatError(f"{path}: no {VERTEX_TAG} lines")

    edges = np.empty((len(raw_edges), 2), dtype=np.int64)
    seen: dict[frozenset, int] = {}
    for k, (lineno, vi, vj, _) in enumerate(raw_edges):
        for vid in (vi, vj):
            if vid not in vertex_index:
                raise _fail(path, lineno, f"edge refers to unknown vertex id {vid}")
        pair = frozenset((vi, vj))
        if pair in seen:
            raise _fail(path, lineno, f"duplicate edge between vertices {vi} and {vj} "
                                      f"(first given on line {seen[pair]})")
        seen[pair] = lineno
        edges[k] = vertex_index[vi], vertex_index[vj]

    T_all = np.stack(vertex_T)
    Z = np.stack([e[3] for e in raw_edges]) if raw_edges else np.empty((0, 4, 4))
    graph = PoseGraph(n=len(vertex_T), edges=edges, Z=Z)
    if require_connected:
        check_connected(graph, path)
    return G2OGraph(vertex_ids=list(vertex_index), T=Poses(R=T_all[:, :3, :3], t=T_all[:, :3, 3]),
                    graph=graph, lines=np.array([e[0] for e in raw_edges], dtype=np.int64))


def check_connected(graph: PoseGraph, path: str | Path) -> None:
    """Raise G2OFormatError if the graph is disconnected: synchronization fixes one gauge per
    component, so solving a disconnected graph as one would report meaningless relative poses
    between components. Must be reported, never solved in silence."""
    components = connected_components(graph.n, graph.edges)
    if len(components) > 1:
        sizes = ", ".join(str(len(c)) for c in components)
        raise G2OFormatError(f"{path}: graph is disconnected: {len(components)} components "
                             f"(sizes {sizes})")


def _pose_fields(T: np.ndarray) -> str:
    q = Rotation.from_matrix(T[:3, :3]).as_quat()  # qx qy qz qw
    return " ".join(repr(float(v)) for v in (*T[:3, 3], *q))


def write_g2o(path: str | Path, vertex_ids, poses_T: Poses, edges, Z) -> None:
    """Write vertices (poses_T: node -> world) and edges (node indices into vertex_ids,
    Z[k] = T_i^{-1} T_j = G_i G_j^{-1}) in g2o format, full float precision (repr round-trips
    exactly), identity information matrices."""
    vertex_ids = [int(v) for v in vertex_ids]
    R, t = np.asarray(poses_T.R, dtype=float), np.asarray(poses_T.t, dtype=float)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    Z = np.asarray(Z, dtype=float).reshape(-1, 4, 4)
    n = len(vertex_ids)
    if len(set(vertex_ids)) != n:
        raise ValueError("write_g2o: vertex_ids must be unique")
    if R.shape != (n, 3, 3) or t.shape != (n, 3):
        raise ValueError(f"write_g2o: poses_T must hold {n} poses (R (n,3,3), t (n,3)); "
                         f"got R {R.shape}, t {t.shape}")
    if len(Z) != len(edges):
        raise ValueError(f"write_g2o: {len(edges)} edges but {len(Z)} measurements Z")
    if len(edges) and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(f"write_g2o: edge node indices must be in [0, {n}); "
                         f"got range [{edges.min()}, {edges.max()}]")

    lines = []
    for k, vid in enumerate(vertex_ids):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R[k], t[k]
        lines.append(f"{VERTEX_TAG} {vid} {_pose_fields(T)}")
    for (i, j), Zk in zip(edges, Z):
        lines.append(f"{EDGE_TAG} {vertex_ids[i]} {vertex_ids[j]} {_pose_fields(Zk)} "
                     f"{_IDENTITY_INFORMATION}")
    Path(path).write_text("\n".join(lines) + "\n")
