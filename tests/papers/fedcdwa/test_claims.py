"""The claim checks C1-C3 on hand-made per-seed runs: paired bootstrap intervals over seeds against the spec's
gates give pass, fail or inconclusive; smoke profiles and missing alphas or baselines stay undecided."""
from __future__ import annotations

import numpy as np
import pytest

from flows.fedcdwa.claims import claims
from flows.fedcdwa.summaries import summarize
from tasks.core.seeding import derive_seed

SEEDS = 8
ALPHAS = [0.1, 0.5, 1.0]


def record(method: str, alpha: float, seed: int, global_accuracy: float, personal_accuracy: float) -> dict:
    return {"method": method, "ablation": None, "alpha": alpha, "seed_index": seed, "global_accuracy": global_accuracy,
            "personal_accuracy": personal_accuracy, "bytes_up_per_round": 1.0, "bytes_down_per_round": 1.0,
            "wall_time_s": 1.0}


def split_spread(alpha: float) -> np.ndarray:
    """A large accuracy offset per seed (split to split) that every method of the seed shares."""
    return np.random.default_rng(int(10 * alpha)).normal(0.0, 0.04, SEEDS)


def runs(alpha: float, method: str, global_gain: float, personal_gain: float, noise: float = 0.0) -> list[dict]:
    """`method`'s runs at `alpha`: FedAvg's accuracies (0.90, 0.90 personal) plus the gains in points, plus
    per-seed noise of standard deviation `noise` points and mean exactly 0 that the method does not share with
    FedAvg (so the mean gain is the gain asked for)."""
    draws = np.random.default_rng(derive_seed(0, method, alpha)).normal(size=SEEDS)
    own = noise / 100 * (draws - draws.mean()) / draws.std()
    return [record(method, alpha, s, 0.90 + global_gain / 100 + split + e, 0.90 + personal_gain / 100 + split + e)
            for s, (split, e) in enumerate(zip(split_spread(alpha), own))]


def table(c1_gain: float = 3.0, noise: float = 0.3, personal: tuple[float, float] = (5.0, 1.0),
          mild_gain: float = 1.0, alphas=ALPHAS, methods=("fedavg", "fedproto", "fedcdwa")) -> dict:
    """FedCDWA `c1_gain` points over FedAvg at alpha 0.1 and `mild_gain` at 1.0 (so its drop is smaller by
    c1_gain - mild_gain); personalised gains over FedAvg of FedCDWA and FedProto (`personal`)."""
    gains = {"fedavg": (0.0, 0.0), "fedproto": (-50.0, personal[1]), "fedcdwa": (c1_gain, personal[0])}
    found = []
    for alpha in alphas:
        for method in methods:
            global_gain, personal_gain = gains[method]
            if method == "fedcdwa" and alpha != 0.1:
                global_gain = mild_gain
            found += runs(alpha, method, global_gain, personal_gain, 0.0 if method == "fedavg" else noise)
    return summarize(found)


def decided(summary: dict, alphas=ALPHAS, deciding: bool = True) -> dict:
    return {c.id: c for c in claims(summary, alphas, deciding, seed=0)}


def test_a_clear_gain_passes_c1_though_the_splits_spread_more_than_the_gate():
    found = decided(table(c1_gain=3.0))["C1"]
    assert found.verdict.word == "pass" and found.ours == pytest.approx(3.0, abs=0.3)
    assert found.verdict.interval.n == SEEDS and "paired bootstrap" in found.verdict.interval.method
    assert len(found.details["per_seed"]["fedcdwa"]) == SEEDS and found.threshold == 1.0


@pytest.mark.parametrize(("gain", "noise", "word"), [(3.0, 0.3, "pass"), (-1.0, 0.3, "fail"), (1.0, 3.0, "inconclusive")])
def test_c1_verdicts(gain, noise, word):
    assert decided(table(c1_gain=gain, noise=noise))["C1"].verdict.word == word


@pytest.mark.parametrize(("personal", "noise", "word"), [
    ((5.0, 1.0), 0.3, "pass"),          # +5 over FedAvg, +4 over FedProto
    ((5.0, 8.0), 0.3, "fail"),          # 3 points below FedProto: the first part fails
    ((1.0, 0.0), 0.3, "fail"),          # level with the best, but only +1 over FedAvg: the second part fails
    ((2.0, 0.0), 3.0, "inconclusive"),  # noisy, +2 over FedAvg exactly at the second part's gate
])
def test_c2_verdicts(personal, noise, word):
    found = decided(table(personal=personal, noise=noise))["C2"]
    assert found.verdict.word == word and "over FedAvg" in found.verdict.reason


def test_c2_needs_fedproto():
    found = decided(table(methods=("fedavg", "fedcdwa")))["C2"]
    assert found.verdict.word == "undecided" and "FedProto" in found.verdict.reason and found.ours is None


@pytest.mark.parametrize(("hard_gain", "mild_gain", "noise", "word"), [
    (3.0, 1.0, 0.3, "pass"),           # FedCDWA drops 2 points less than FedAvg
    (0.0, 3.0, 0.3, "fail"),           # 3 points more
    (1.0, 1.0, 3.0, "inconclusive"),   # the same drop, noisy
])
def test_c3_verdicts(hard_gain, mild_gain, noise, word):
    found = decided(table(c1_gain=hard_gain, mild_gain=mild_gain, noise=noise))["C3"]
    assert found.verdict.word == word and found.threshold == 0.0
    assert found.ours == pytest.approx(mild_gain - hard_gain, abs=1.5 * noise)


def test_smoke_and_missing_alphas_are_undecided_with_the_reason():
    assert all(c.verdict.word == "undecided" and "decide_claims" in c.verdict.reason
               for c in decided(table(), deciding=False).values())
    without_mild = decided(table(alphas=[0.1, 0.5]), alphas=[0.1, 0.5])
    assert without_mild["C1"].verdict.word == "pass" and without_mild["C3"].verdict.word == "undecided"
    assert "lacks alpha = 1" in without_mild["C3"].verdict.reason
    only_mild = decided(table(alphas=[0.5]), alphas=[0.5])
    assert all(c.verdict.word == "undecided" and "lacks alpha" in c.verdict.reason and "0.1" in c.verdict.reason
               for c in only_mild.values())
    assert only_mild["C1"].details["setting"] == "alpha = 0.5" and only_mild["C1"].ours is not None

