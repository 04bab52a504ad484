"""SoftSignum's claims decided on a paired bootstrap over seeds: per claim, a sample that clears the gate passes,
one clearly outside fails, one that straddles it is inconclusive, and smoke leaves it undecided."""
from __future__ import annotations

import pytest

from flows.softsignum.claims import evaluate_claims

SEEDS = range(6)


def quad(name: str, seed: int, loss: float) -> dict:
    return {"task": "quad_het", "optimizer": name, "seed": seed, "evals": [{"f": 9.0}, {"f": loss}], "curve": [],
            "t_sign": 0, "wall_time_s": 1.0}


def lm(name: str, seed: int, accuracy: float, loss: float = 1.5) -> dict:
    return {"task": "charlm", "optimizer": name, "seed": seed, "final": {"accuracy": accuracy, "loss": loss}, "curve": [],
            "t_sign": 0, "wall_time_s": 1.0}


def records(soft_quad: list[float], soft_accuracy: list[float], softmuon_loss: list[float],
            hardswitch_accuracy: float = 0.50) -> list[dict]:
    """Signum 1.0 and HardSwitchSign 0.6 terminal loss on quad-het; Signum 0.55 accuracy; Muon 1.5 val loss;
    SoftSignum and SoftMuon at the given per-seed numbers."""
    rows = []
    for seed in SEEDS:
        rows += [quad("signum", seed, 1.0), quad("hardswitch", seed, 0.6), quad("softsignum", seed, soft_quad[seed]),
                 lm("signum", seed, 0.55), lm("hardswitch", seed, hardswitch_accuracy),
                 lm("softsignum", seed, soft_accuracy[seed]),
                 lm("muon", seed, 0.5, 1.5), lm("softmuon", seed, 0.5, softmuon_loss[seed])]
    return rows


def verdicts(rows: list[dict], deciding: bool = True) -> dict[str, str]:
    claims, _ = evaluate_claims(rows, deciding=deciding)
    return {claim.id: claim.verdict.word for claim in claims}


CLEAR = ([0.20, 0.21, 0.19, 0.20, 0.22, 0.20], [0.56, 0.565, 0.562, 0.558, 0.561, 0.563], [1.45, 1.46, 1.44, 1.45, 1.47, 1.45])
WORSE = ([0.90, 0.92, 0.88, 0.91, 0.90, 0.93], [0.53, 0.535, 0.532, 0.528, 0.531, 0.533], [1.60, 1.62, 1.61, 1.59, 1.63, 1.60])
NOISY = ([0.3, 0.7, 0.4, 0.6, 0.5, 0.45], [0.53, 0.57, 0.54, 0.56, 0.555, 0.545], [1.40, 1.60, 1.45, 1.55, 1.50, 1.48])


def test_clear_gains_pass_clear_losses_fail_and_noise_around_the_gate_is_inconclusive():
    assert verdicts(records(*CLEAR)) == {"C1": "pass", "C2": "pass", "C3": "pass"}
    assert verdicts(records(*WORSE)) == {"C1": "fail", "C2": "fail", "C3": "fail"}
    assert verdicts(records(*NOISY)) == {"C1": "inconclusive", "C2": "inconclusive", "C3": "inconclusive"}
    assert verdicts(records(*CLEAR), deciding=False) == {"C1": "undecided", "C2": "undecided", "C3": "undecided"}


def test_each_claim_is_decided_on_the_worse_of_its_conditions():
    c1, c2, c3 = evaluate_claims(records(*CLEAR, hardswitch_accuracy=0.58), deciding=True)[0]
    assert c1.ours == pytest.approx(max(0.20 / 0.5, 0.20 / 0.6)) and c1.details["ratio_to_signum"] == pytest.approx(0.2)
    assert c2.ours == pytest.approx(0.5615 - 0.58) and c2.verdict.word == "fail"  # above Signum, below HardSwitchSign
    assert c3.ours == pytest.approx(1.45 / 1.5) and "paired bootstrap over 6 seeds" in c3.verdict.interval.method
    assert c1.details["per_seed_terminal_loss"][2] == {"hardswitch": 0.6, "signum": 1.0, "softsignum": 0.19}


def test_without_hardswitch_on_the_char_lm_only_signum_decides_c2():
    rows = [r for r in records(*CLEAR, hardswitch_accuracy=0.9) if (r["task"], r["optimizer"]) != ("charlm", "hardswitch")]
    c2 = evaluate_claims(rows, deciding=True)[0][1]
    assert c2.verdict.word == "pass" and c2.ours == pytest.approx(0.5615 - 0.55)


def test_a_single_seed_gives_no_interval():
    one = [r for r in records(*CLEAR) if r["seed"] == 0]
    claims, _ = evaluate_claims(one, deciding=True)
    assert all(c.verdict.word == "undecided" and "at least 2" in c.verdict.reason for c in claims)
    assert claims[0].ours == pytest.approx(0.2 / 0.5)
