"""`papers fedcdwa simulate` refuses work past its limit (1,000 clients x 1,000 rounds) before it starts."""
from __future__ import annotations

import pytest

from tests.cli_table import bad, check_rows

pytestmark = pytest.mark.heavy  # a child process that starts `papers`: ~3-5 s


def test_unbounded_work_is_refused(tmp_path):
    check_rows([bad(("fedcdwa", "simulate", "--clients", "1000", "--rounds", "1000"), "--clients x --rounds", "limit")],
               cwd=tmp_path)
