"""`papers mip-early-stop stop --sol` on a shared machine (tests/output_table.py): planted links and a device are refused
before any work."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.output_table import assert_dangling_refused, assert_link_refused, assert_refused, output_case
from tests.platform.second_user import other  # noqa: F401

STOP = ("mip-early-stop", "stop", "m.mps", "--stopper", "s.pt")


def rows(shared: Path) -> dict[str, tuple[str, ...]]:
    return {"link": (*STOP, "--sol", str(shared / "mip.sol")), "dangling": (*STOP, "--sol", str(shared / "dangling.sol")),
            "device": (*STOP, "--sol", "/dev/full")}


@pytest.fixture(scope="module")
def case(tmp_path_factory, other):  # noqa: F811 - the fixture
    yield from output_case(tmp_path_factory, other, lambda work: None, rows, links=("mip.sol",), dangling=("dangling.sol",))


def test_planted_links_and_a_device_are_refused(case):
    assert_link_refused(case, "link", "--sol")
    assert_dangling_refused(case, "dangling", "--sol", "dangling.sol")
    assert_refused(case.results["device"], "--sol", "not a regular file")
