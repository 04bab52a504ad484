"""Early stopping of the surrogates (tasks/cfd/surrogate/training.EarlyStopping, issue 42): patience counted on the
median of the last `window` validation scores, so a single spike cannot end training while a real plateau does; the
best evaluation's weights are kept."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from tasks.cfd.surrogate.training import EarlyStopping

# UniDrag seed 0's validation R^2 every 100 steps in the issue-17 run (a spike at 500), then the curve still rising
SPIKED = [0.543, 0.877, 0.924, 0.918, 0.972, 0.933, 0.945, 0.956, 0.962, 0.968, 0.974, 0.979]
PLATEAU = [0.5, 0.7, 0.8, 0.85, 0.86, 0.855, 0.86, 0.858, 0.859, 0.857, 0.86, 0.856]


def stopped_at(scores: list[float], patience: int, window: int) -> tuple[int | None, EarlyStopping]:
    """(1-based evaluation that stopped training or None, the rule); the model's weight holds the evaluation number."""
    rule, model = EarlyStopping(patience, window), nn.Linear(1, 1)
    for evaluation, score in enumerate(scores, start=1):
        with torch.no_grad():
            model.weight.fill_(evaluation)
        if rule.update(100 * evaluation, score, model):
            return evaluation, rule
    return None, rule


def test_a_single_spike_ends_the_raw_rule_but_not_the_median_rule():
    assert stopped_at(SPIKED, patience=3, window=1)[0] == 8  # step 800, as in the committed run
    evaluation, rule = stopped_at(SPIKED, patience=3, window=3)
    assert evaluation is None and rule.smoothed_curve[-1] == [1200, pytest.approx(0.974)]
    assert rule.best_step == 1200 and rule.best_state["weight"].item() == 12


def test_a_real_plateau_still_stops_with_the_median_rule():
    evaluation, rule = stopped_at(PLATEAU, patience=3, window=3)
    assert evaluation == 10  # medians .80 .80 .85 .855 .86 (best at 7) .858 .859 .858: three without a new best
    assert rule.best_step == 500 and rule.best_state["weight"].item() == 5  # the best evaluation's weights


def test_a_spike_on_a_plateau_does_not_delay_the_stop():
    spiked = PLATEAU[:6] + [0.99] + PLATEAU[7:]
    assert stopped_at(spiked, patience=3, window=3)[0] == stopped_at(PLATEAU, patience=3, window=3)[0]


def test_the_first_evaluations_set_no_best_until_the_window_is_full():
    """A spike among the first two evaluations (a median of two would be their mean) sets no best to beat."""
    evaluation, rule = stopped_at([0.99, 0.8, 0.82, 0.84, 0.86, 0.88], patience=2, window=3)
    assert evaluation is None and [s for _, s in rule.smoothed_curve] == pytest.approx([0.82, 0.82, 0.84, 0.86])


def test_patience_zero_never_stops_and_a_window_below_one_is_refused():
    assert stopped_at([0.9, 0.1, 0.1, 0.1, 0.1], patience=0, window=1)[0] is None
    with pytest.raises(ValueError, match="window"):
        EarlyStopping(3, 0)
