"""The sps_safe claim checks C1-C3 (spec §6) on hand-made summaries."""
from __future__ import annotations

import pytest

from flows.sps_safe.claims import claims


def _row(rule, param, final, lam=0.0):
    return {"rule": rule, "param": param, "c": 1.0, "lam": lam, "final_mean": final}


def test_claims_compare_as_the_spec_says():
    p1 = {"a": _row("sgd", 0.01, 1e-3), "b": _row("sps_max", 1.0, 3e-4), "c": _row("sps_safe", 1.0, 5e-4),
          "d": _row("ima_sps_safe", 1.0, 5.4e-4, lam=9.0)}
    p2 = {f"s{M}": _row("sps_safe", M, v) for M, v in ((10.0, 0.4), (100.0, 0.3), (1000.0, 0.3))}
    p2 |= {f"i{M}": _row("ima_sps_safe", M, 0.3, lam=9.0) for M in (10.0, 100.0, 1000.0)}
    c1, c2, c3 = claims(p1, p2, decide=True)
    assert c1.passed and c1.threshold == pytest.approx(6e-4)
    assert c2.passed and c2.ours == pytest.approx(0.75) and c2.details["monotone"]
    assert c3.passed and c3.ours == pytest.approx(1.08)
    p1["c"]["final_mean"] = 7e-4  # now worse than 2 x best SPS_max
    p2["s100.0"]["final_mean"] = 0.2  # ratio still 0.75, but not monotone in M
    p2["i1000.0"]["final_mean"] = 0.34  # 1.13 x SPS_safe
    c1, c2, c3 = claims(p1, p2, decide=True)
    assert (c1.passed, c2.passed, c3.passed) == (False, False, False)
    assert all(c.passed is None for c in claims(p1, p2, decide=False))
