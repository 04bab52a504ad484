"""The claim checks C1-C4 on hand-made per-run rows: thresholds as the spec fixes them, paired statistics."""
from __future__ import annotations

import numpy as np
import pytest

from flows.ddsvm.claims import claims, paired_interval, reduction


def rows(ce_head, ce_svm, dd_svm, dd_head, cos_head, times=(1.0, 1.5)):
    out = []
    for s in range(len(ce_head)):
        out.append({"method": "ce", "k": 10, "seed": s, "head_error": ce_head[s], "svm_error": ce_svm[s],
                    "wall_time_s": times[0], "margin_min": 0.0, "margin_mean": 0.1})
        out.append({"method": "ddsvm", "k": 10, "seed": s, "head_error": dd_head[s], "svm_error": dd_svm[s],
                    "wall_time_s": times[1], "margin_min": 0.1, "margin_mean": 0.3})
        out.append({"method": "cosine", "k": 10, "seed": s, "head_error": cos_head[s], "svm_error": cos_head[s],
                    "wall_time_s": times[0], "margin_min": 0.1, "margin_mean": 0.3})
    return out


def test_verdicts_at_the_spec_thresholds():
    # C1 ratio 9.44 / 10 = 0.944 passes exactly at the threshold; C2 9.44 <= 9.5; C3 9.44 <= 8.9 + 0.5 fails
    checked = claims(rows([10, 10], [9.5, 9.5], [9.44, 9.44], [9, 11], [8.9, 8.9]), 10, [10], decide=True)
    c1, c2, c3, c4 = checked
    assert c1.ours == pytest.approx(0.944) and c1.passed is True
    assert c1.details["svm_vs_ce_head"]["wins"] == 2 and c1.details["head_vs_ce_head"]["wins"] == 1
    assert c2.passed is True and c2.threshold == 9.5
    assert c3.passed is False and c3.threshold == pytest.approx(9.4)
    assert c4.ours == pytest.approx(1.5) and c4.passed is True
    undecided = claims(rows([10], [9], [8], [8], [8]), 10, [10], decide=False)
    assert all(c.passed is None for c in undecided)


def test_missing_cosine_leaves_c3_undecided():
    no_cosine = [r for r in rows([10, 12], [9, 9], [8, 8], [8, 8], [7, 7]) if r["method"] != "cosine"]
    c3 = claims(no_cosine, 10, [10], decide=True)[2]
    assert c3.passed is None and c3.threshold is None


def test_paired_interval_and_reduction():
    interval = paired_interval(np.array([-1.0, -2.0, -3.0]))  # t(0.975, 2) = 4.303, sd 1: half width 2.484
    assert interval["mean"] == -2.0 and interval["high"] == pytest.approx(-2.0 + 4.3027 / np.sqrt(3), abs=1e-3)
    assert paired_interval(np.array([1.0]))["low"] is None
    r = reduction(rows([10, 10, 10], [9, 9, 9], [8, 7, 9], [9, 9, 9], [8, 8, 8]), 10)
    assert r["relative_reduction"] == pytest.approx(0.2) and r["absolute_reduction_pt"] == pytest.approx(2.0)
