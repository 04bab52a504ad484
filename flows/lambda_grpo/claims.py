"""lambda_grpo claim checks C1-C5 of spec §6.3, fixed before any result (not tuned), decided by the one rule of
tasks/core/claims.py: C1 exact, C2 on a t-interval over seeds, C3 (and C5, the same on the second family) on a
paired bootstrap over seeds, C4 on the timing repeats.

The precondition, decided by the same rule on a bootstrap over the validation prompts: the SFT policies (mean over
seeds per prompt) beat always answering the most common answer by >= 0.10 greedy accuracy, and leave room to rise
(accuracy <= 0.85). Unless it passes, C3 is inconclusive with its reason. C3 is also inconclusive, decided here
before any run, when GRPO's mean curve reaches 0.95 A* already at step 0 (no rise to be faster to).
"""
from __future__ import annotations

import math

import numpy as np

from tasks.core.claims import (Claim, Gate, Verdict, all_hold, bootstrap_interval, decide, exact, on_interval,
                               on_timings, t_interval)
from tasks.core.seeding import derive_seed

from .params import Params

METHODS = ("grpo", "lambda_grpo")
C1_TOL = 1e-8
C2_FRACTION = 0.90
C3_PEAK_FRACTION, C3_SPEEDUP, C3_PEAK_SLACK = 0.95, 0.75, 0.01
C4_FACTOR = 1.10
MARGIN_OVER_CONSTANT, ROOM = 0.10, 0.85
BOOTSTRAP_SEED = 0


def primary_runs(params: Params, runs: list[dict]) -> dict[str, list[dict]]:
    """method -> its runs of the primary RL setting (first group size and aggregation), in seed order."""
    G, aggregation = params.rl.group_sizes[0], params.rl.aggregations[0]
    primary = [r for r in runs if r["setting"]["group_size"] == G and r["setting"]["aggregation"] == aggregation]
    return {m: sorted((r for r in primary if r["method"] == m), key=lambda r: r["seed_index"]) for m in METHODS}


def precondition(sft: list[dict], constant: dict) -> Verdict:
    """SFT beats the constant answer by MARGIN_OVER_CONSTANT and leaves room (<= ROOM): per validation prompt, the
    mean over seeds of the SFT policies' greedy reward; a bootstrap over the prompts (the seeds' policies are the
    fixed starting points of the RL runs, the prompts the sample)."""
    policy = np.mean([row["greedy_val_rewards"] for row in sft], axis=0)
    rows = np.stack([policy, np.asarray(constant["val_rewards"])], axis=1)
    seed = derive_seed(BOOTSTRAP_SEED, "bootstrap", "precondition")
    margin = bootstrap_interval([rows], lambda r: float(r[:, 0].mean() - r[:, 1].mean()), seed, "validation prompts")
    room = bootstrap_interval([rows], lambda r: float(r[:, 0].mean()), seed, "validation prompts")
    return all_hold({"margin over the constant answer": on_interval(margin, Gate(low=MARGIN_OVER_CONSTANT)),
                     "room to rise": on_interval(room, Gate(high=ROOM))})


def curves(runs: list[dict], metric: str) -> np.ndarray:
    """[seeds, evaluations] of one method's runs."""
    return np.array([[e[metric] for e in r["evals"]] for r in runs])


def first_reach(curve: np.ndarray, steps: list[int], level: float) -> int | None:
    hits = np.nonzero(curve >= level - 1e-12)[0]
    return int(steps[hits[0]]) if hits.size else None


def auc(curve: np.ndarray) -> float:
    return float(np.trapezoid(curve) / max(len(curve) - 1, 1))


def claim_c1(identity: dict, deciding: bool) -> Claim:
    worst = max(identity["grpo_vs_prm"], identity["lambda_grpo_vs_prm_without_frequency"])
    return Claim("C1", f"float64 gradient of GRPO (token-mean, mu = 1, beta = 0) = gradient of the PRM form "
                       f"-(1/N_tok) sum_lambda |lambda| A(lambda) sum_t log pi, and lambda-GRPO = the same without "
                       f"|lambda|, relative error <= {C1_TOL:g} ({identity['groups']} groups)",
                 "exact equivalence (main theorem)", worst, C1_TOL,
                 decide(lambda: exact(worst <= C1_TOL, f"an identity: the largest float64 relative error {worst:.2g} "
                                                       f"over {identity['groups']} groups <= {C1_TOL:g}"), deciding),
                 identity | {"setting": f"{identity['groups']} groups sampled from the seed-0 SFT policy"})


def seed_fractions(runs: list[dict]) -> list[float]:
    """Per seed, the fraction of its RL groups (every method and setting) with a non-trivial process set: the runs
    of one seed share its SFT policy, so the seed is the unit."""
    seeds = sorted({r["seed_index"] for r in runs})
    counts = [[(s["nontrivial_groups"], s["groups"]) for r in runs if r["seed_index"] == k for s in r["steps"]]
              for k in seeds]
    return [sum(n for n, _ in rows) / sum(g for _, g in rows) for rows in counts]


def claim_c2(runs: list[dict], deciding: bool) -> Claim:
    fractions = seed_fractions(runs)
    # each seed's fraction is a mean over thousands of groups, close to normal: a t-interval over the seeds
    return Claim("C2", f"fraction of RL groups with a process set 1 < |lambda| < G after the prompt >= {C2_FRACTION:g} "
                       "(mean over seeds)",
                 "99.8%+ of groups", float(np.mean(fractions)), C2_FRACTION,
                 decide(lambda: on_interval(t_interval(fractions, "seeds"), Gate(low=C2_FRACTION)), deciding),
                 {"seeds": len(fractions), "fraction_per_seed": fractions,
                  "groups": sum(s["groups"] for r in runs for s in r["steps"]),
                  "nontrivial_groups": sum(s["nontrivial_groups"] for r in runs for s in r["steps"]),
                  "setting": "every RL group of every run"})


def speed_ratio(pairs: np.ndarray, steps: list[int]) -> float:
    """pairs [seeds, (GRPO, lambda-GRPO), evaluations] of greedy accuracy: the steps lambda-GRPO's mean curve takes to
    reach 0.95 x GRPO's mean peak over the steps GRPO's takes; inf when it never does, nan when GRPO is there at
    step 0 (no rise to compare speeds on)."""
    grpo, lam = pairs[:, 0].mean(0), pairs[:, 1].mean(0)
    level = C3_PEAK_FRACTION * grpo.max()
    s_grpo, s_lam = first_reach(grpo, steps, level), first_reach(lam, steps, level)
    if not s_grpo:
        return math.nan
    return math.inf if s_lam is None else s_lam / s_grpo


def peak_margin(pairs: np.ndarray) -> float:
    """lambda-GRPO's mean-curve peak minus GRPO's (A*)."""
    return float(pairs[:, 1].mean(0).max() - pairs[:, 0].mean(0).max())


def claim_c3(by_method: dict[str, list[dict]], start: Verdict, deciding: bool, claim_id: str = "C3",
             family: str = "") -> Claim:
    """C3 on one family's runs (C5: the second family); `start` is the family's precondition."""
    steps = [e["step"] for e in by_method["grpo"][0]["evals"]]
    pairs = np.stack([curves(by_method[m], "greedy") for m in METHODS], axis=1)  # seed k: the same SFT policy
    mean = {m: pairs[:, i].mean(0) for i, m in enumerate(METHODS)}
    a_star = float(mean["grpo"].max())
    level = C3_PEAK_FRACTION * a_star
    s = {m: first_reach(mean[m], steps, level) for m in METHODS}
    ratio = speed_ratio(pairs, steps)

    def verdict() -> Verdict:
        if start.word != "pass":
            return Verdict("inconclusive", f"precondition not met ({start.word}): {start.reason}")
        if s["grpo"] == 0:
            return Verdict("inconclusive", "GRPO's mean curve is within 5% of its peak at step 0: no rise to compare "
                                           "speeds on")
        seed = derive_seed(BOOTSTRAP_SEED, "bootstrap", "C3")
        speed = bootstrap_interval([pairs], lambda p: speed_ratio(p, steps), seed, "seeds")
        peak = bootstrap_interval([pairs], peak_margin, seed, "seeds")
        return all_hold({"speed": on_interval(speed, Gate(high=C3_SPEEDUP)),
                         "peak": on_interval(peak, Gate(low=-C3_PEAK_SLACK))})

    paired = [auc(a) > auc(b) for a, b in zip(pairs[:, 1], pairs[:, 0])]
    tests = {m: [r["test_at_best"] for r in by_method[m]] for m in METHODS}
    return Claim(claim_id, f"{family}lambda-GRPO reaches {C3_PEAK_FRACTION:g} x GRPO's peak A* (mean greedy val curve "
                           f"over seeds) in <= {C3_SPEEDUP:g} x GRPO's steps, and its peak >= A* - {C3_PEAK_SLACK:g}",
                 "~2x faster to peak; higher accuracy (qualitative, Fig./Table not read)",
                 ratio if math.isfinite(ratio) else None, C3_SPEEDUP, decide(verdict, deciding),
                 {"a_star": a_star, "level": level, "steps_to_level": s, "lambda_grpo_peak": float(mean["lambda_grpo"].max()),
                  "peak_margin": peak_margin(pairs), "seeds": len(paired),
                  "steps_to_level_per_seed": {m: [first_reach(c, steps, level) for c in pairs[:, i]]
                                              for i, m in enumerate(METHODS)},
                  "seeds_lambda_auc_larger": int(sum(paired)),
                  "test_at_best_val": tests, "test_mean": {m: float(np.mean(v)) for m, v in tests.items()},
                  "precondition": {"verdict": start.word, "reason": start.reason},
                  "setting": "primary RL setting, greedy validation accuracy"})


def claim_c4(by_method: dict[str, list[dict]], deciding: bool) -> Claim:
    # the two methods of a seed run side by side and meet the same load: the seed is the timing repeat
    medians = {m: [float(np.median([s["wall_time_s"] for s in r["steps"]])) for r in by_method[m]] for m in METHODS}
    ratios = [lam / grpo for grpo, lam in zip(medians["grpo"], medians["lambda_grpo"])]
    return Claim("C4", f"median wall time per RL step of lambda-GRPO <= {C4_FACTOR:g} x GRPO's (median over seeds of "
                       "the per-seed ratio)",
                 "negligible impact on training time", float(np.median(ratios)), C4_FACTOR,
                 decide(lambda: on_timings(ratios, Gate(high=C4_FACTOR), "seeds run side by side"), deciding),
                 {"seeds": len(ratios), "ratio_per_seed": ratios, "median_step_s_per_seed": medians,
                  "setting": "primary RL setting, every step of every seed"})


def summarize(by_method: dict[str, list[dict]], sft: list[dict], constant: dict) -> dict:
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
    out["constant_answer"] = {"answer": constant["answer"], "greedy_val": float(np.mean(constant["val_rewards"]))}
    out["flat"] |= {"initial_greedy_val": out["initial_greedy_val"], "initial_sampled_val": out["initial_sampled_val"],
                    "constant_answer_val": out["constant_answer"]["greedy_val"]}
    return out


def family_summary(params: Params, runs: list[dict], sft: list[dict], constant: dict) -> tuple[dict, dict, Verdict]:
    """One family's runs by method, its summary (with the precondition) and the precondition's verdict."""
    by_method = primary_runs(params, runs)
    summary = summarize(by_method, sft, constant)
    start = precondition(sft, constant)
    summary["precondition"] = {"verdict": start.word, "reason": start.reason,
                               "gates": {"margin_over_constant_at_least": MARGIN_OVER_CONSTANT, "accuracy_at_most": ROOM}}
    return by_method, summary, start


def claims(params: Params, family: dict, identity: dict, sweep: dict, second: dict | None = None
           ) -> tuple[list[Claim], dict]:
    """C1-C4 on the first family (`family`: its runs, sft rows and constant-answer baseline), C5 on the second's
    when the profile runs it; the summary holds the learning-rate sweep and the second family's under "second"."""
    deciding = params.decide_claims
    by_method, summary, start = family_summary(params, **family)
    summary["lr_sweep"] = sweep
    found = [claim_c1(identity, deciding), claim_c2(family["runs"], deciding), claim_c3(by_method, start, deciding),
             claim_c4(by_method, deciding)]
    if second is not None:
        by_method2, summary["second"], start2 = family_summary(params, **second)
        found.append(claim_c3(by_method2, start2, deciding, "C5", "second family (mod 7, longer chains): "))
        summary["flat"] |= {f"second.{k}": v for k, v in summary["second"].pop("flat").items()}
    return found, summary
