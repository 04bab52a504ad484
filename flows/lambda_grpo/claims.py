"""lambda_grpo claim checks C1-C4 of spec §6.3, fixed before any result (not tuned).

The precondition (mean initial greedy validation accuracy of the SFT policies in [0.10, 0.85]) gates C3 and
C4's meaning: outside it C3 is inconclusive (passed None). C3 is also inconclusive, decided here before any
run, when GRPO's mean curve reaches 0.95 A* already at step 0 (no rise to be faster to).
"""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Claim, decided, not_run

from .experiments import rl_settings
from .params import Params

METHODS = ("grpo", "lambda_grpo")
C1_TOL = 1e-8
C2_FRACTION = 0.90
C3_PEAK_FRACTION, C3_SPEEDUP, C3_PEAK_SLACK = 0.95, 0.75, 0.01
C4_FACTOR = 1.10
PRECONDITION = (0.10, 0.85)


def primary_runs(params: Params, runs: list[dict]) -> dict[str, list[dict]]:
    """method -> its runs of the primary RL setting, in seed order."""
    primary = rl_settings(params)[0]
    return {m: sorted((r for r in runs if r["method"] == m and r["setting"] == primary), key=lambda r: r["seed_index"])
            for m in METHODS}


def curves(runs: list[dict], metric: str) -> np.ndarray:
    """[seeds, evaluations] of one method's runs."""
    return np.array([[e[metric] for e in r["evals"]] for r in runs])


def first_reach(curve: np.ndarray, steps: list[int], level: float) -> int | None:
    hits = np.nonzero(curve >= level - 1e-12)[0]
    return int(steps[hits[0]]) if hits.size else None


def auc(curve: np.ndarray) -> float:
    return float(np.trapezoid(curve) / max(len(curve) - 1, 1))


def claim_c1(identity: dict, decide: bool) -> Claim:
    worst = max(identity["grpo_vs_prm"], identity["lambda_grpo_vs_prm_without_frequency"])
    return Claim("C1", f"float64 gradient of GRPO (token-mean, mu = 1, beta = 0) = gradient of the PRM form "
                       f"-(1/N_tok) sum_lambda |lambda| A(lambda) sum_t log pi, and lambda-GRPO = the same without "
                       f"|lambda|, relative error <= {C1_TOL:g} ({identity['groups']} groups)",
                 "exact equivalence (main theorem)", worst, C1_TOL, decided(worst <= C1_TOL, decide, worst),
                 identity | {"setting": f"{identity['groups']} groups sampled from the seed-0 SFT policy"})


def claim_c2(runs: list[dict], decide: bool) -> Claim:
    groups = sum(s["groups"] for r in runs for s in r["steps"])
    nontrivial = sum(s["nontrivial_groups"] for r in runs for s in r["steps"])
    fraction = nontrivial / groups if groups else None
    return Claim("C2", f"fraction of RL groups with a process set 1 < |lambda| < G after the prompt >= {C2_FRACTION:g}",
                 "99.8%+ of groups", fraction, C2_FRACTION,
                 decided(fraction is not None and fraction >= C2_FRACTION, decide, fraction),
                 {"groups": groups, "nontrivial_groups": nontrivial, "setting": "every RL group of every run"})


def claim_c3(by_method: dict[str, list[dict]], precondition_ok: bool, decide: bool) -> Claim:
    steps = [e["step"] for e in by_method["grpo"][0]["evals"]]
    mean = {m: curves(by_method[m], "greedy").mean(0) for m in METHODS}
    a_star = float(mean["grpo"].max())
    level = C3_PEAK_FRACTION * a_star
    s = {m: first_reach(mean[m], steps, level) for m in METHODS}
    lam_peak = float(mean["lambda_grpo"].max())
    ratio = None if s["lambda_grpo"] is None or not s["grpo"] else s["lambda_grpo"] / s["grpo"]
    peak_ok = lam_peak >= a_star - C3_PEAK_SLACK
    speed_ok = s["lambda_grpo"] is not None and s["lambda_grpo"] <= C3_SPEEDUP * s["grpo"]
    inconclusive = None if precondition_ok else "precondition (initial greedy accuracy) not met"
    if inconclusive is None and s["grpo"] == 0:
        inconclusive = "GRPO's mean curve is within 5% of its peak at step 0: no rise to compare speeds on"
    verdict = not_run(inconclusive) if inconclusive else decided(speed_ok and peak_ok, decide, a_star)
    paired = [auc(a) > auc(b) for a, b in zip(curves(by_method["lambda_grpo"], "greedy"),
                                              curves(by_method["grpo"], "greedy"))]
    tests = {m: [r["test_at_best"] for r in by_method[m]] for m in METHODS}
    return Claim("C3", f"lambda-GRPO reaches {C3_PEAK_FRACTION:g} x GRPO's peak A* (mean greedy val curve over seeds) "
                       f"in <= {C3_SPEEDUP:g} x GRPO's steps, and its peak >= A* - {C3_PEAK_SLACK:g}",
                 "~2x faster to peak; higher accuracy (qualitative, Fig./Table not read)", ratio, C3_SPEEDUP,
                 verdict,
                 {"a_star": a_star, "level": level, "steps_to_level": s, "lambda_grpo_peak": lam_peak,
                  "speed_ok": speed_ok, "peak_ok": peak_ok, "inconclusive": inconclusive,
                  "seeds": len(paired), "seeds_lambda_auc_larger": int(sum(paired)),
                  "test_at_best_val": tests, "test_mean": {m: float(np.mean(v)) for m, v in tests.items()},
                  "setting": "primary RL setting, greedy validation accuracy"})


def claim_c4(by_method: dict[str, list[dict]], decide: bool) -> Claim:
    medians = {m: float(np.median([s["wall_time_s"] for r in by_method[m] for s in r["steps"]])) for m in METHODS}
    ratio = medians["lambda_grpo"] / medians["grpo"]
    return Claim("C4", f"median wall time per RL step of lambda-GRPO <= {C4_FACTOR:g} x GRPO's",
                 "negligible impact on training time", ratio, C4_FACTOR, decided(ratio <= C4_FACTOR, decide, ratio),
                 {"median_step_s": medians, "setting": "primary RL setting, every step of every seed"})


def summarize(params: Params, by_method: dict[str, list[dict]], sft: list[dict]) -> dict:
    steps = [e["step"] for e in by_method["grpo"][0]["evals"]]
    out = {"eval_steps": steps, "curves": {}, "flat": {}}
    for m in METHODS:
        greedy, sampled = curves(by_method[m], "greedy"), curves(by_method[m], "sampled")
        out["curves"][m] = {"greedy": greedy.mean(0).tolist(), "greedy_std": greedy.std(0).tolist(),
                            "sampled": sampled.mean(0).tolist(), "sampled_std": sampled.std(0).tolist()}
        out[f"{m}_peak"] = float(greedy.mean(0).max())
        out[f"{m}_test"] = float(np.mean([r["test_at_best"] for r in by_method[m]]))
        out["flat"] |= {f"{m}.peak_greedy_val": out[f"{m}_peak"], f"{m}.test_at_best_val": out[f"{m}_test"],
                        f"{m}.final_greedy_val": float(greedy.mean(0)[-1]),
                        f"{m}.final_sampled_val": float(sampled.mean(0)[-1]),
                        f"{m}.mean_reward": float(np.mean([s["reward"] for r in by_method[m] for s in r["steps"]])),
                        f"{m}.mean_lambda": float(np.mean([s["mean_lambda"] for r in by_method[m] for s in r["steps"]])),
                        f"{m}.shared_token_fraction": float(np.mean([s["shared_token_fraction"]
                                                                     for r in by_method[m] for s in r["steps"]]))}
    out["initial_greedy_val"] = float(np.mean([row["greedy_val"] for row in sft]))
    out["initial_sampled_val"] = float(np.mean([row["sampled_val"] for row in sft]))
    out["flat"] |= {"initial_greedy_val": out["initial_greedy_val"], "initial_sampled_val": out["initial_sampled_val"]}
    return out


def claims(params: Params, runs: list[dict], sft: list[dict], identity: dict) -> tuple[list[Claim], dict]:
    by_method = primary_runs(params, runs)
    summary = summarize(params, by_method, sft)
    low, high = PRECONDITION
    precondition_ok = low <= summary["initial_greedy_val"] <= high
    summary["precondition"] = {"initial_greedy_val": summary["initial_greedy_val"], "range": [low, high],
                               "met": precondition_ok}
    decide = params.decide_claims
    return [claim_c1(identity, decide), claim_c2(runs, decide), claim_c3(by_method, precondition_ok, decide),
            claim_c4(by_method, decide)], summary
