"""`papers neural-qaoa2 solve --out` on a shared machine (tests/output_table.py)."""
from tests.output_table import assert_planted_link_refused
from tests.platform.second_user import other  # noqa: F401


def test_a_planted_link_at_out_is_refused(tmp_path_factory, other):  # noqa: F811 - the fixture
    assert_planted_link_refused(tmp_path_factory, other, ("neural-qaoa2", "solve", "graph.txt", "--policy", "kl"), "qaoa2.txt")
