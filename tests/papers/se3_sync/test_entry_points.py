"""`papers se3-sync solve` on hostile input: one line naming the culprit, exit 2, no traceback, no allocation blind
(tests/cli_table.py)."""
from __future__ import annotations

from tests.cli_table import bad, check_rows, ok, write

INFO = " ".join("1" if c == r else "0" for r in range(6) for c in range(r, 6))  # 21 entries of an identity


def g2o_lines(x: str = "1", q: str = "0 0 0 1") -> list[str]:
    vertices = ["VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1", f"VERTEX_SE3:QUAT 1 {x} 0 0 {q}", "VERTEX_SE3:QUAT 2 2 0 0 0 0 0 1"]
    return vertices + [f"EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 {INFO}", f"EDGE_SE3:QUAT 1 2 1 0 0 0 0 0 1 {INFO}"]


def test_se3_sync_solve(tmp_path):
    graph = write(tmp_path / "in.g2o", "\n".join(g2o_lines()) + "\n")
    f = lambda name, lines: write(tmp_path / name, "\n".join(lines) + "\n")  # noqa: E731
    solve = ("se3-sync", "solve", "--g2o")
    out = ("--out", str(tmp_path / "out.g2o"))
    check_rows([
        ok("se3-sync", "solve", "--help"),
        ok(*solve, graph, *out, "--method", "chain"),
        bad((*solve, f("far.g2o", g2o_lines(x="1e300")), *out), "far.g2o", "line 2", "1e300", "1e+09"),
        bad((*solve, f("nan.g2o", g2o_lines(x="nan")), *out), "nan.g2o", "line 2", "non-finite"),
        bad((*solve, f("quat.g2o", g2o_lines(q="1e200 0 0 1")), *out), "quat.g2o", "qx"),
        bad((*solve, write(tmp_path / "blob.g2o", bytes(range(256)) * 4), *out), "blob.g2o", "binary"),
        bad((*solve, str(tmp_path / "missing.g2o"), *out), "missing.g2o", "no such file"),
        bad((*solve, f("empty.g2o", ["# nothing"]), *out), "empty.g2o", "no VERTEX_SE3:QUAT"),
        bad((*solve, graph, "--out", str(tmp_path / "no" / "dir" / "o.g2o")), "--out", "does not exist"),
        bad((*solve, graph, *out, "--method", "sdp"), "--method", "sdp"),
    ])
    assert not (tmp_path / "no").exists()
