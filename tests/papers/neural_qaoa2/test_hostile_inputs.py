"""`papers neural-qaoa2 solve` reads node ids as plain decimal digits: `1_000` is refused, not read as 1000."""
from __future__ import annotations

import pytest

from tests.cli_table import bad, check_rows, write

pytestmark = pytest.mark.heavy  # a child process that starts `papers`: ~3-5 s


def test_a_node_id_with_an_underscore_is_refused(tmp_path):
    graph = write(tmp_path / "g.txt", "0 1 1\n1 1_000 2\n")
    check_rows([bad(("neural-qaoa2", "solve", graph), "g.txt:2", "'1_000'", "decimal digits")], cwd=tmp_path)
