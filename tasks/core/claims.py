"""Claim checks: one decision rule and one shape for every paper's claims.json, and the combined report.

A gated claim is decided on an interval of its statistic (`Interval`: a bootstrap over seeds or instances, a
t-interval, or a distribution-free interval of a median), against the gate the paper or the theory gives
(`Gate`): **pass** when the interval clears the gate, **fail** when it lies wholly on the wrong side,
**inconclusive** when it straddles. A claim that is exact (an identity, a count) is decided on its value and says
so; a target never reached is a fail with the reason. **undecided** is only for a claim that was not run at a
size meant to decide it (the smoke profile, a setting the profile lacks), with the reason; **report** is a number
shown with no gate.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tasks.core.inputs import InputError, read_json

VERDICTS = ("pass", "fail", "inconclusive", "undecided", "report")
LEVEL = 0.95  # every interval's coverage unless a claim states otherwise
RESAMPLES = 4000


@dataclass(frozen=True)
class Interval:
    """A `level` interval [low, high] of a claim's statistic from `n` units (seeds, instances, repeats), by `method`
    (in words: "paired bootstrap over 10 seeds", "t-interval", ...)."""
    low: float
    high: float
    n: int
    method: str
    level: float = LEVEL


@dataclass(frozen=True)
class Gate:
    """Where the statistic must lie for the claim to hold: >= `low`, <= `high`, or both (a range)."""
    low: float | None = None
    high: float | None = None

    def __post_init__(self):
        if self.low is None and self.high is None:
            raise ValueError("a gate needs a low or a high bound")

    def holds(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def __str__(self) -> str:
        if self.low is not None and self.high is not None:
            return f"[{self.low:g}, {self.high:g}]"
        return f">= {self.low:g}" if self.low is not None else f"<= {self.high:g}"


@dataclass(frozen=True)
class Verdict:
    """One of VERDICTS, why, and the interval it stands on (None for exact claims, reports and claims not run)."""
    word: str
    reason: str = ""
    interval: Interval | None = None

    def __post_init__(self):
        if self.word not in VERDICTS:
            raise ValueError(f"verdict: must be one of {VERDICTS}, got {self.word!r}")

    @property
    def passed(self) -> bool | None:
        """The old boolean view (pass True, fail False, otherwise None) that metrics.json's `C1.pass` keeps."""
        return {"pass": True, "fail": False}.get(self.word)


def on_interval(interval: Interval, gate: Gate) -> Verdict:
    """pass when the whole interval lies where the gate wants it, fail when the whole interval lies outside,
    inconclusive when it straddles a bound."""
    inside = gate.holds(interval.low) and gate.holds(interval.high)
    below = gate.low is not None and interval.high < gate.low
    above = gate.high is not None and interval.low > gate.high
    if inside:
        return Verdict("pass", f"the {interval.level:.0%} interval [{interval.low:.4g}, {interval.high:.4g}] lies in {gate}",
                       interval)
    if below or above:
        return Verdict("fail", f"the {interval.level:.0%} interval [{interval.low:.4g}, {interval.high:.4g}] lies outside "
                               f"{gate}", interval)
    return Verdict("inconclusive", f"the {interval.level:.0%} interval [{interval.low:.4g}, {interval.high:.4g}] "
                                   f"straddles {gate}: more seeds or instances could tell", interval)


def exact(ok: bool, why: str) -> Verdict:
    """A claim decided on its value with no sampling error (an identity, a count): `why` says what was checked."""
    return Verdict("pass" if ok else "fail", f"exact: {why}")


def never_reached(why: str) -> Verdict:
    return Verdict("fail", f"target never reached: {why}")


def not_run(why: str) -> Verdict:
    return Verdict("undecided", f"not run: {why}")


def report_only(why: str = "no gate: the paper gives no number to check") -> Verdict:
    return Verdict("report", why)


SMOKE = "the profile is not sized to decide (decide_claims: false)"


def decide(verdict: Callable[[], Verdict], deciding: bool) -> Verdict:
    """`verdict()` when the profile is sized to decide, else undecided (the smoke profile runs the claim only to test
    the code; its numbers are too few to stand on)."""
    return verdict() if deciding else not_run(SMOKE)


def bootstrap_interval(groups: Sequence[Sequence], statistic: Callable[..., float], seed: int, what: str,
                       level: float = LEVEL, resamples: int = RESAMPLES) -> Interval:
    """Percentile bootstrap of `statistic(*groups)`: each group's units are resampled with replacement on their
    own (pass one group of rows to resample pairs together: a paired bootstrap). `what` names the units in the
    method ("seeds", "instances")."""
    import numpy as np  # here: `papers report` reads this module without numpy

    arrays = [np.asarray(group, dtype=float) for group in groups]
    if any(len(a) < 2 for a in arrays):
        raise ValueError(f"bootstrap: each group needs at least 2 {what}, got {[len(a) for a in arrays]}")
    rng = np.random.default_rng(seed)
    picks = [rng.integers(0, len(a), size=(resamples, len(a))) for a in arrays]
    draws = np.array([statistic(*(a[p[r]] for a, p in zip(arrays, picks))) for r in range(resamples)], dtype=float)
    tail = (1 - level) / 2
    # An infinite statistic is a bound (a median N of a target never reached: above any budget) and sorts as one;
    # an undefined one (nan: 0/0) could lie on either side, so it counts as -inf for the low end and +inf for the
    # high end and only ever widens the interval. No interpolation between order statistics: inf - inf is nan.
    low = np.quantile(np.where(np.isnan(draws), -np.inf, draws), tail, method="inverted_cdf")
    high = np.quantile(np.where(np.isnan(draws), np.inf, draws), 1 - tail, method="inverted_cdf")
    sizes = " and ".join(str(len(a)) for a in arrays)
    kind = "paired bootstrap" if len(arrays) == 1 and arrays[0].ndim > 1 else "bootstrap"
    return Interval(float(low), float(high), sum(len(a) for a in arrays),
                    f"{kind} over {sizes} {what} ({resamples} resamples, percentile)", level)


def t_interval(values: Sequence[float], what: str, level: float = LEVEL) -> Interval:
    """Student-t interval of the mean, for a sample the claim states is close to normal (differences of paired
    means over seeds)."""
    import numpy as np
    from scipy import stats

    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        raise ValueError(f"t-interval: needs at least 2 {what}, got {len(values)}")
    half = stats.t.ppf(0.5 + level / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    mean = float(values.mean())
    return Interval(mean - half, mean + half, len(values), f"t-interval of the mean over {len(values)} {what}", level)


def median_interval(values: Sequence[float], what: str, level: float = LEVEL) -> Interval:
    """Distribution-free interval of the median from order statistics (binomial), for timings: at least 9 values
    (with 8 or fewer the interval spans the whole sample at 95%)."""
    from scipy import stats

    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    if n < 9:
        raise ValueError(f"median interval: needs at least 9 {what}, got {n}")
    k = int(stats.binom.ppf((1 - level) / 2, n, 0.5))  # [x(k), x(n-k+1)] covers the median with >= level
    return Interval(ordered[k - 1], ordered[n - k], n, f"order-statistic interval of the median of {n} {what}", level)


MIN_TIMING_REPEATS = 9  # with fewer, the order-statistic interval of a median spans the whole sample


def on_timings(values: Sequence[float], gate: Gate, what: str) -> Verdict:
    """A timing's median over repeats against its gate; inconclusive with fewer repeats than its interval needs."""
    if len(values) < MIN_TIMING_REPEATS:
        return Verdict("inconclusive", f"fewer than {MIN_TIMING_REPEATS} repeats ({what}: {len(values)})")
    return on_interval(median_interval(values, what), gate)


def _combined_word(parts: Iterable[Verdict]) -> str:
    words = {verdict.word for verdict in parts}
    return "fail" if "fail" in words else "pass" if words == {"pass"} else "inconclusive"


def all_hold(parts: dict[str, Verdict]) -> Verdict:
    """A claim of several conditions: fail when one fails, pass when all pass, inconclusive otherwise. The first
    part is the claim's statistic (its `ours`): its interval stands for the claim; the reason gives every part."""
    return Verdict(_combined_word(parts.values()),
                   "; ".join(f"{name}: {verdict.reason}" for name, verdict in parts.items()),
                   next(iter(parts.values())).interval)


WORSE_FIRST = ("fail", "inconclusive", "pass")


def worst_part(parts: dict[str, Verdict]) -> tuple[str, Verdict]:
    """A claim that holds where every part holds, told by the part that decides it: a failing part, else a
    straddling one, else the first; among parts of one verdict the first listed decides (list the headline or the
    worst part first). Its interval is the deciding part's."""
    name = min(parts, key=lambda part: WORSE_FIRST.index(parts[part].word))
    passing = sum(verdict.word == "pass" for verdict in parts.values())
    deciding = parts[name]
    return name, Verdict(deciding.word, f"{name} decides ({passing} of {len(parts)} parts pass): {deciding.reason}",
                         deciding.interval)


@dataclass
class Claim:
    """A paper's claim checked side by side against its baselines: `ours` is its statistic, `threshold` the gate's
    bound as one number (the gate itself is in the verdict's reason), `verdict` how it was decided."""

    id: str
    statement: str
    paper_value: str
    ours: float | None
    threshold: float | None
    verdict: Verdict
    details: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.verdict, Verdict):
            raise TypeError(f"claim {self.id}: verdict must be a tasks.core.claims.Verdict, got {self.verdict!r}")

    @property
    def passed(self) -> bool | None:
        return self.verdict.passed


def median_of(values: Iterable[float]) -> float | None:
    """Median of the values (over seeds, graphs, instances), None when there are none."""
    values = list(values)
    import numpy as np  # here: `papers report` loads this module and must start without numpy

    return float(np.median(values)) if values else None


def median_where(rows: Iterable[dict], key: str, **where) -> float | None:
    """Median of row[key] over the rows whose fields equal `where` (optimizer="muon", ...); None when none match."""
    return median_of(row[key] for row in rows if all(row.get(k) == v for k, v in where.items()))


def _finite_bounds(interval: dict) -> dict:
    """metrics.json's bounds: an unbounded end is null."""
    return {key: None if key in ("low", "high") and not math.isfinite(value) else value for key, value in interval.items()}


INFINITE_ENDS = {"-inf": -math.inf, "inf": math.inf}


def _json_bounds(interval: dict) -> dict:
    """claims.json's interval: JSON has no infinity, so an infinite end is the string "-inf" or "inf" (a null end,
    in files written before, is unbounded: -inf low, inf high). Both ends can lie at -inf: every resample failed."""
    def end(value: float):
        return None if math.isnan(value) else value if math.isfinite(value) else "inf" if value > 0 else "-inf"

    return {key: end(value) if key in ("low", "high") else value for key, value in interval.items()}


def interval_end(interval: dict, key: str) -> float:
    """An end of a claims.json interval as a number: null is unbounded (-inf low, inf high)."""
    value = interval[key]
    if value is None:
        return -math.inf if key == "low" else math.inf
    return INFINITE_ENDS.get(value, value) if isinstance(value, str) else float(value)


def claim_record(claim: Claim) -> dict:
    """A claim as claims.json holds it: the verdict's word, reason and interval (low, high, n, method, level)
    beside the old `passed` boolean."""
    verdict = claim.verdict
    return {"id": claim.id, "statement": claim.statement, "paper_value": claim.paper_value, "ours": claim.ours,
            "threshold": claim.threshold, "verdict": verdict.word, "reason": verdict.reason,
            "interval": None if verdict.interval is None else _json_bounds(asdict(verdict.interval)),
            "passed": verdict.passed,
            "details": claim.details}


def claims_document(paper: str, profile: str, commit: str, claims: list[Claim]) -> dict:
    return {"paper": paper, "profile": profile, "commit": commit, "claims": [claim_record(c) for c in claims]}


def headline_metrics(claims: list[Claim], **numbers: float | None) -> dict:
    """A paper's metrics.json: what `dvc metrics show` and `dvc exp show` list for it, one screen per paper.

    Each claim's measured value (`C1`), its interval (`C1.low`, `C1.high`) where it has one, and verdict
    (`C1.pass`: 1 pass, 0 fail, absent otherwise), then the few headline numbers the paper names; the details stay
    in claims.json and MLflow.
    """
    if len(numbers) > MAX_HEADLINE_NUMBERS:
        raise ValueError(f"{len(numbers)} headline numbers: metrics.json keeps at most {MAX_HEADLINE_NUMBERS}")
    metrics: dict = {}
    for claim in claims:
        metrics[claim.id] = claim.ours
        if claim.verdict.interval is not None:
            bounds = _finite_bounds(asdict(claim.verdict.interval))
            metrics[f"{claim.id}.low"], metrics[f"{claim.id}.high"] = bounds["low"], bounds["high"]
        if claim.passed is not None:
            metrics[f"{claim.id}.pass"] = int(claim.passed)
    return metrics | numbers


MAX_HEADLINE_NUMBERS = 6


def verdict_word(claim: dict) -> str:
    """A claims.json claim's verdict; one written before verdicts existed has only `passed`."""
    return claim.get("verdict") or {True: "pass", False: "fail", None: "undecided"}[claim["passed"]]


def status_word(claim: dict) -> str:
    """The verdict as tables show it: FAIL in capitals so that it stands out."""
    word = verdict_word(claim)
    return "FAIL" if word == "fail" else word


def number_text(value) -> str:
    return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


def _ours(claim: dict) -> str:
    """The statistic with its interval where it has one: `0.68 [0.61, 0.77]`."""
    interval = claim.get("interval")
    text = number_text(claim["ours"])
    if not interval:
        return text
    low, high = (number_text(end) if math.isfinite(end) else str(end) for end in (interval_end(interval, "low"), interval_end(interval, "high")))
    return f"{text} [{low}, {high}]"


def claims_rows(document: dict) -> list[tuple[str, ...]]:
    """(paper, id, statement, paper's figure, ours [interval], threshold, status) per claim."""
    return [
        (document["paper"], c["id"], c["statement"], str(c["paper_value"]), _ours(c),
         number_text(c["threshold"]), status_word(c))
        for c in document["claims"]
    ]


def read_claims(paths: list[Path]) -> list[dict]:
    """The claims documents of the paths that exist (read_claims_file's checks)."""
    return [read_claims_file(p) for p in paths if os.path.lexists(p)]


def read_claims_file(path: Path) -> dict:
    """A paper's data/<paper>/claims.json, checked to have the shape claims_document writes and the report, `papers
    list` and the READMEs read; a folder, garbage or another shape is an InputError naming the file and the fix."""
    paper = Path(path).parent.name
    fix = f"restore it (`git checkout -- data/{paper}/claims.json`) or rewrite it (`papers run {paper}`)"
    try:
        document = read_json(path, "claims file", MAX_CLAIMS_BYTES)
    except InputError as error:
        raise InputError(f"{error}; {fix}") from None
    problem = _shape_problem(document)
    if problem:
        raise InputError(f"claims file {path}: {problem}, not a claims document; {fix}")
    return document


MAX_CLAIMS_BYTES = 16 * 2**20


def _shape_problem(document) -> str | None:
    """What keeps `document` from being a claims.json as claims_document writes it (one written before verdicts, with
    `passed` alone, is one too); None when nothing does."""
    if not isinstance(document, dict):
        return f"a JSON {type(document).__name__}, expected an object"
    for key in ("paper", "profile"):
        if not isinstance(document.get(key), str):
            return f"field {key!r} must be a string"
    if not isinstance(document.get("claims"), list):
        return "field 'claims' must be a list"
    for number, claim in enumerate(document["claims"], 1):
        where = f"claim {number}"
        if not isinstance(claim, dict):
            return f"{where} is not an object"
        for key in ("id", "statement"):
            if not isinstance(claim.get(key), str):
                return f"{where}: field {key!r} must be a string"
        if "paper_value" not in claim:
            return f"{where}: field 'paper_value' is missing"
        if not all(key in claim and _number_or_null(claim[key]) for key in ("ours", "threshold")):
            return f"{where}: fields 'ours' and 'threshold' must be numbers or null"
        verdict = claim.get("verdict")
        if verdict not in VERDICTS and not (verdict is None and claim.get("passed", "") in (True, False, None)):
            return f"{where}: field 'verdict' must be one of {', '.join(VERDICTS)}"
        interval = claim.get("interval")
        if interval is not None and not (isinstance(interval, dict)
                                         and all(end in interval and _bound_or_null(interval[end]) for end in ("low", "high"))):
            return f"{where}: field 'interval' must be null or an object with numbers (or \"-inf\", \"inf\") 'low' and 'high'"
        if not isinstance(claim.get("details"), dict):
            return f"{where}: field 'details' must be an object"
    return None


def _number_or_null(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _bound_or_null(value) -> bool:
    return _number_or_null(value) or (isinstance(value, str) and value in INFINITE_ENDS)


def _markdown_rows(document: dict) -> list[tuple[str, ...]]:
    """claims_rows with each statement followed by its setting, cells safe inside a markdown table."""
    rows = []
    for claim, row in zip(document["claims"], claims_rows(document)):
        paper, cid, statement, *rest = (cell.replace("|", "\\|") for cell in row)
        if claim["details"].get("setting"):
            statement += f" ({claim['details']['setting']})"
        rows.append((paper, cid, statement, *rest))
    return rows


def claims_markdown(documents: list[dict]) -> str:
    lines = ["# Claims", "", "| paper | profile | claim | statement | paper's figure | ours | threshold | status |",
             "|---|---|---|---|---|---|---|---|"]
    for document in documents:
        for paper, cid, statement, paper_value, ours, threshold, status in _markdown_rows(document):
            lines.append(f"| {paper} | {document['profile']} | {cid} | {statement} | {paper_value} | {ours} | {threshold} | {status} |")
    return "\n".join(lines) + "\n"


def paper_results_markdown(document: dict) -> list[str]:
    """One paper's claims as the table its README shows (stages/readme.py)."""
    lines = ["| claim | statement | paper's figure | ours | threshold | result |", "|---|---|---|---|---|---|"]
    lines += [f"| {cid} | {statement} | {paper_value} | {ours} | {threshold} | {status} |"
              for _, cid, statement, paper_value, ours, threshold, status in _markdown_rows(document)]
    return lines
