"""`papers se3-sync solve --out` on a shared machine (tests/output_table.py): planted links, a device and the input
itself are refused before any work; a good write has the direct write's bytes and the umask's mode, or keeps the
mode of the private file it replaces."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.output_table import assert_dangling_refused, assert_link_refused, assert_refused, assert_written, output_case
from tests.platform.second_user import other  # noqa: F401

INFO = " ".join("1" if c == r else "0" for r in range(6) for c in range(r, 6))
G2O = ("VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1\nVERTEX_SE3:QUAT 1 1 0 0 0 0 0 1\nVERTEX_SE3:QUAT 2 2 0 0 0 0 0 1\n"
       f"EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 {INFO}\nEDGE_SE3:QUAT 1 2 1.1 0 0 0 0 0 1 {INFO}\n")
SOLVE = ("se3-sync", "solve", "--g2o", "a.g2o", "--method", "chain")


def inputs(work: Path) -> None:
    """A pose graph, a hard link to it, a folder to spell a path through, and an older private result."""
    (work / "a.g2o").write_text(G2O)
    os.link(work / "a.g2o", work / "hard.g2o")
    (work / "sub").mkdir()
    (work / "private.g2o").write_text("an older result\n")
    (work / "private.g2o").chmod(0o600)


def rows(shared: Path) -> dict[str, tuple[str, ...]]:
    return {
        "link": (*SOLVE, "--out", str(shared / "se3.g2o")),
        "dangling": (*SOLVE, "--out", str(shared / "dangling.g2o")),
        "device": (*SOLVE, "--out", "/dev/full"),
        "input": (*SOLVE, "--out", "a.g2o"),
        "input-spelling": (*SOLVE, "--out", "./sub/../a.g2o"),
        "input-hard-link": (*SOLVE, "--out", "hard.g2o"),
        "write": (*SOLVE, "--out", "fresh.g2o"),
        "write-over-private": (*SOLVE, "--out", "private.g2o"),
    }


@pytest.fixture(scope="module")
def case(tmp_path_factory, other):  # noqa: F811 - the fixture
    yield from output_case(tmp_path_factory, other, inputs, rows, links=("se3.g2o",), dangling=("dangling.g2o",))


def test_planted_links_and_a_device_are_refused(case):
    assert_link_refused(case, "link", "--out")
    assert_dangling_refused(case, "dangling", "--out", "dangling.g2o")
    assert_refused(case.results["device"], "--out", "not a regular file")


@pytest.mark.parametrize("row", ["input", "input-spelling", "input-hard-link"])
def test_output_equal_to_the_input_is_refused(case, row):
    assert_refused(case.results[row], "--out", "is the input", "--g2o a.g2o")
    assert (case.work / "a.g2o").read_text() == G2O


def direct_write(work: Path, target: Path) -> bytes:
    """What `se3-sync solve --method chain` wrote before staging: write_g2o straight to the path."""
    from flows.se3_sync.cli import anchor
    from tasks.sync.g2o import invert_poses, read_g2o, write_g2o
    from tasks.sync.methods import METHODS

    loaded = read_g2o(work / "a.g2o")
    poses_T = anchor(invert_poses(METHODS["chain"](loaded.graph).poses), loaded.T)
    write_g2o(target, loaded.vertex_ids, poses_T, loaded.graph.edges, loaded.graph.Z)
    return target.read_bytes()


def test_good_write_has_the_direct_writes_bytes_and_the_umasks_mode(case, tmp_path):
    for row in ("write", "write-over-private"):
        assert case.results[row].code == 0, case.results[row].stderr
    expected = direct_write(case.work, tmp_path / "direct.g2o")
    assert_written(case, "fresh.g2o", expected)
    assert_written(case, "private.g2o", expected, mode=0o600)  # a private file stays private
