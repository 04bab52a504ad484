"""`papers zovh estimate` refuses a smoothing radius so small that the Hessian estimate would be NaN."""
from __future__ import annotations

import pytest

from tests.cli_table import bad, check_rows

pytestmark = pytest.mark.heavy  # a child process that starts `papers`: ~3-5 s


def test_a_vanishing_mu_is_refused(tmp_path):
    import numpy as np

    (tmp_path / "userfn.py").write_text("def quad(x):\n    return float(x @ x)\n")
    np.save(tmp_path / "x.npy", np.ones(3))
    check_rows([bad(("zovh", "estimate", "userfn:quad", "--at", str(tmp_path / "x.npy"), "--queries", "5", "--mu",
                     "1e-320"), "--mu", "1.49167e-154", "1e-320")], cwd=tmp_path)
