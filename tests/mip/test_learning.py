"""Spec §10 tests on the learning side: features, bounded LSTM, loss, training,
persistence, conformal calibration and the replayed stopping rules. Synthetic trajectories only;
the whole file runs in seconds on a CPU."""
from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
import torch

from tasks.mip.conformal import (
    StopOutcome,
    algorithmic_gaps,
    calibrate,
    conformal_threshold,
    coverage_over_splits,
    first_eps_optimal,
    quantile_index,
    replay_stop,
    scip_gap,
    score,
    solution_limit_stop,
    stop_outcome,
    threshold_stop,
    time_limit_stop,
    time_limit_threshold,
    time_to_eps,
)
from tasks.mip.features import FEATURES, ROOT_DONE, FeatureStream, decayed_average, eligible_rows, feature_matrix
from tasks.mip.model import (
    GapLSTM,
    Normalizer,
    dataset_loss,
    load_model,
    relative_l1_loss,
    save_model,
    train,
)
from tasks.mip.stopper import NetworkStopper
from tasks.mip.trajectory import Trajectory

EPS = 1e-3
ALPHA = 0.05
BOUND = 1e4


def make_trajectory(rng: np.random.Generator, K: int = 40, name: str = "syn", n_before: int = 3) -> Trajectory:
    """A plausible min-sense solve with an integer optimum z: no incumbent (U = B) for the first
    `n_before` samples, then an incumbent that improves at random samples and reaches z about
    half way; the dual bound rises monotonically to z at the last sample."""
    t = np.cumsum(rng.exponential(0.05, K))
    wall = 1.05 * t + 0.002
    z = -float(rng.integers(25, 40))
    lb = z - rng.uniform(3.0, 12.0) * (1.0 - np.linspace(0.0, 1.0, K) ** 0.5)
    k_opt = int(rng.integers(n_before + 1, K - 2))
    ub = np.full(K, BOUND)
    nsols = np.zeros(K, dtype=int)
    start = z + float(rng.integers(2, 8))
    improvements = np.sort(rng.choice(np.arange(n_before + 1, k_opt), size=min(3, k_opt - n_before - 1), replace=False))
    level, count = start, 1
    for k in range(n_before, K):
        if k == k_opt:
            level, count = z, count + 1
        elif k in improvements and level - 1 > z:
            level, count = level - 1, count + 1
        ub[k], nsols[k] = level, count
    return Trajectory(instance=name, family="synthetic", sense=1, bound=BOUND, t=t, wall=wall, lb=lb, ub=ub,
                      nsols=nsols, nodes=np.arange(K), lp_iters=10 * np.arange(K), final_ub=z,
                      solve_time=float(wall[-1] + 0.01), status="optimal")


@pytest.fixture(scope="module")
def pool() -> list[Trajectory]:
    rng = np.random.default_rng(7)
    return [make_trajectory(rng, K=int(rng.integers(20, 50)), name=f"i{i}") for i in range(16)]


# --- features ---------------------------------------------------------------------------------


def test_decayed_average_limits():
    t = np.cumsum(np.r_[0.0, np.full(9, 0.3)])
    assert np.allclose(decayed_average(np.full(10, 3.7), t, 1.0), 3.7, rtol=0, atol=1e-12)
    x = np.random.default_rng(0).normal(size=10)
    far = np.arange(10) * 1e6  # Delta -> infinity forgets the past
    assert np.array_equal(decayed_average(x, far, 1.0), x)
    same = np.zeros(10)  # Delta = 0: midpoint of the old average and the new value
    a = decayed_average(x, same, 5.0)
    expected = [x[0]]
    for v in x[1:]:
        expected.append((expected[-1] + v) / 2)
    assert np.allclose(a, expected, rtol=0, atol=1e-15)
    assert a[1] == pytest.approx((x[0] + x[1]) / 2)


def test_feature_stream_equals_batch_on_eligible_rows(pool):
    traj = pool[0]
    lb, ub = traj.lb.copy(), traj.ub.copy()
    lb[0], ub[7] = -1e20, 1e20  # "no bound" (SCIP's infinity, or the sampler's clipped -B) is not a feature
    traj = replace(traj, lb=lb, ub=ub)
    mask = eligible_rows(traj)
    expected = (np.abs(lb) < BOUND) & (np.abs(ub) < BOUND) & (traj.nodes >= ROOT_DONE)
    assert np.array_equal(mask, expected) and not mask[:3].any() and not mask[7] and mask[8]
    X = feature_matrix(traj)
    assert X.shape == (mask.sum(), len(FEATURES)) and np.all(np.abs(X[:, :9]) < BOUND)
    assert np.array_equal(X[:, 9], ub[mask] - lb[mask])
    assert np.array_equal(X[:, 10], (ub[mask] - lb[mask]) / (np.abs(ub[mask]) + 1))
    assert X[0, 3] == lb[mask][0], "the decayed averages start at the first eligible row"
    stream = FeatureStream(bound=traj.bound)
    pushed = [stream.push(*row) for row in zip(traj.t, traj.lb, traj.ub, traj.nodes)]
    assert [row is not None for row in pushed] == mask.tolist()
    assert np.array_equal(np.stack([row for row in pushed if row is not None]), X)


# --- labels -----------------------------------------------------------------------------------


def test_labels_on_synthetic_trajectory(pool):
    for traj in pool:
        y, r = traj.y, traj.r
        assert np.all(y >= 0) and np.all(np.diff(y) <= 0) and y[-1] == 0
        assert np.allclose(r, y / (abs(traj.final_ub) + 0.1))
        assert np.all(traj.ub >= traj.lb)
    # a maximisation solve, negated into minimisation sense
    incumbent = np.array([10.0, 12.0, 12.0, 15.0])
    dual = np.array([30.0, 22.0, 18.0, 15.0])
    U, L = -incumbent, -dual
    assert np.all(np.diff(U) <= 0) and np.all(U >= L)


# --- network ----------------------------------------------------------------------------------


def random_model(seed: int = 0, hidden: int = 8, layers: int = 2) -> GapLSTM:
    torch.manual_seed(seed)
    model = GapLSTM(len(FEATURES), hidden, layers)
    with torch.no_grad():
        model.head.weight.mul_(20.0)  # saturate tanh on both sides too
    return model.eval()


def test_bounded_output_random_inputs(pool):
    rng = np.random.default_rng(1)
    model = random_model()
    x = torch.from_numpy(rng.normal(scale=3.0, size=(4, 30, len(FEATURES))).astype(np.float32))
    x[..., 1] = x[..., 0] + torch.from_numpy(np.abs(rng.normal(size=(4, 30))).astype(np.float32))
    x[:, ::5, 1] = x[:, ::5, 0]  # U~ = L~
    g, _ = model(x)
    width = x[..., 1] - x[..., 0]
    assert torch.all(g >= 0) and torch.all(g <= width) and torch.all(g[:, ::5] == 0)

    normalizer = Normalizer.fit(pool)
    traj = make_trajectory(rng, K=30)
    traj.lb = rng.normal(-30, 10, 30)
    traj.ub = traj.lb + np.abs(rng.normal(0, 5, 30))
    traj.ub[::4] = traj.lb[::4]
    pred = model.predict(traj, normalizer)
    mask = eligible_rows(traj)
    assert np.all(pred[~mask] == np.inf) and mask.sum() == 30 - ROOT_DONE
    assert np.all(pred[mask] >= 0) and np.all(pred[mask] <= (traj.ub - traj.lb)[mask]) and np.all(pred[4::4] == 0)


def test_step_matches_predict(pool):
    model = random_model(hidden=12)
    normalizer = Normalizer.fit(pool)
    traj = pool[3]
    stream, state, online = FeatureStream(traj.bound), None, []
    for row in zip(traj.t, traj.lb, traj.ub, traj.nodes):
        features = stream.push(*row)
        if features is None:
            online.append(math.inf)
            continue
        gap, state = model.step(features, state, normalizer)
        online.append(gap)
    assert np.allclose(online, model.predict(traj, normalizer), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="normalizer"):
        model.predict(traj)


def test_normalizer_shares_bound_map_and_round_trips(pool):
    normalizer = Normalizer.fit(pool)
    assert normalizer.mu[1] == normalizer.mu[0] and normalizer.scale[1] == normalizer.scale[0]
    assert normalizer.scale[0] < 1e3, "no row without an incumbent (U = B) reaches the bounds' scale"
    X = feature_matrix(pool[0])
    X[0, 4] = np.nan
    Xn = normalizer.transform(X)
    assert Xn[0, 4] == 0 and Xn.dtype == np.float32
    assert np.allclose(Xn[:, 1] - Xn[:, 0], (X[:, 1] - X[:, 0]) / (normalizer.s_lb + 1), rtol=1e-5, atol=1e-4)
    again = Normalizer.from_dict(normalizer.to_dict())
    assert np.array_equal(again.mu, normalizer.mu) and np.array_equal(again.scale, normalizer.scale)


# --- loss and training ------------------------------------------------------------------------


def test_loss_weighting_by_hand():
    eps_a = 1.0
    y = torch.tensor([0.0, 0.5, 5.0, 20.0])
    pred = torch.tensor([1.0, 0.5, 4.0, 10.0])
    # in: 0.1 <= y <= 10 -> positions 1 and 2; N_in = N_out = 2
    w_in, w_out = Fraction(10, 3) / 11, Fraction(1, 3) / 11
    terms = [w_out * 1, w_in * 0, w_in * Fraction(1, 6), w_out * Fraction(10, 21)]
    expected = float(sum(terms) / 4)
    assert float(relative_l1_loss(pred, y, eps_a)) == pytest.approx(expected, rel=1e-6)
    # a (B, K) batch weighs over all positions together
    assert float(relative_l1_loss(pred.reshape(2, 2), y.reshape(2, 2), eps_a)) == pytest.approx(expected, rel=1e-6)
    with pytest.raises(ValueError, match="eps_a"):
        relative_l1_loss(pred, y, 0.0)


TRAIN = {"hidden": 16, "layers": 1, "steps": 240, "batch": 8, "lr": 1e-2, "eps_a": 1.0, "log_every": 60}


def test_training_reduces_loss_and_is_deterministic(pool):
    data = pool[:8]
    initial, normalizer, curve0 = train(data, **{**TRAIN, "steps": 0}, seed=3)
    assert curve0 == []
    before = dataset_loss(initial, normalizer, data, TRAIN["eps_a"])
    model, normalizer, curve = train(data, **TRAIN, seed=3)
    after = dataset_loss(model, normalizer, data, TRAIN["eps_a"])
    assert after < 0.75 * before, (before, after)
    assert [s for s, _ in curve] == [1, 60, 120, 180, 240]

    state = torch.get_rng_state()
    again, _, curve_again = train(data, **TRAIN, seed=3)
    assert torch.equal(state, torch.get_rng_state())  # the global RNG is left alone
    assert curve_again == curve
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
    other, _, _ = train(data, **TRAIN, seed=4)
    assert not torch.equal(model.head.weight, other.head.weight)
    with pytest.raises(ValueError, match="batch"):
        train(data, **{**TRAIN, "batch": 0}, seed=3)


def test_save_load_round_trip(pool, tmp_path):
    model, normalizer, _ = train(pool[:4], **{**TRAIN, "steps": 5}, seed=0)
    path = tmp_path / "model.pt"
    save_model(path, model, normalizer, {"family": "mis", "eps_a": 1.0})
    loaded, loaded_norm, meta = load_model(path, family="mis")
    assert meta == {"family": "mis", "eps_a": 1.0}
    for traj in pool[:4]:
        assert np.array_equal(loaded.predict(traj), model.predict(traj, normalizer))
    assert np.array_equal(loaded_norm.mu, normalizer.mu)
    with pytest.raises(ValueError, match="family 'mis'"):
        load_model(path, family="gisp")


# --- conformal --------------------------------------------------------------------------------


def test_quantile_index():
    assert quantile_index(39, ALPHA) == 2
    assert quantile_index(19, ALPHA) == 1
    assert quantile_index(18, ALPHA) == 0
    assert quantile_index(99, 0.29) == 29  # 0.29 * 100 is 28.999999999999996 in floating point
    scores = np.arange(18.0)
    assert conformal_threshold(scores, ALPHA) == -math.inf
    assert conformal_threshold(np.arange(39.0)[::-1], ALPHA) == 1.0  # the 2nd smallest
    with pytest.raises(ValueError, match="alpha"):
        quantile_index(10, 1.5)
    with pytest.raises(ValueError, match="method"):
        conformal_threshold(scores, ALPHA, method="median")


def test_no_early_stop_when_tau_is_minus_infinity(pool):
    tau = conformal_threshold(np.random.default_rng(0).uniform(size=18), ALPHA)
    for traj in pool:
        k = replay_stop(np.zeros(len(traj)), traj.nsols, tau)
        assert k == len(traj) - 1
        outcome = threshold_stop(traj, np.zeros(len(traj)), tau, rule="method", eps=EPS)
        assert not outcome.stopped_early and outcome.covered and outcome.time == traj.solve_time


def test_conformal_validity_on_exchangeable_scores():
    rng = np.random.default_rng(2024)
    reps, n = 10_000, 39
    draws = rng.exponential(size=(reps, n + 1))
    cal, new = draws[:, :n], draws[:, n]
    finite = np.mean([new[i] < conformal_threshold(cal[i], ALPHA) for i in range(reps)])
    numpy_rate = np.mean([new[i] < conformal_threshold(cal[i], ALPHA, method="numpy") for i in range(reps)])
    # baseline 6 on exchangeable times: failure when the new time to eps exceeds T
    late = np.mean([new[i] > time_limit_threshold(cal[i], ALPHA) for i in range(reps)])
    print(f"\nP(s_new < tau): finite {finite:.4f} (bound 2/40 = 0.05), np.quantile {numpy_rate:.4f}; "
          f"time limit P(t_new > T) {late:.4f}")
    assert abs(finite - 0.05) <= 0.01
    assert finite <= numpy_rate < 0.1
    assert abs(late - 0.05) <= 0.01


def test_perfect_predictor(pool):
    preds = [traj.y.astype(float) for traj in pool]
    scores = np.array([score(p, traj.r, EPS) for p, traj in zip(preds, pool)])
    for traj, p, s in zip(pool, preds, scores):
        k = replay_stop(p, traj.nsols, s)  # its own score as tau: never before k*
        assert k >= first_eps_optimal(traj.r, EPS)
    for tau in (scores.min(), scores.min() / 2):
        outcomes = [threshold_stop(traj, p, tau, rule="oracle", eps=EPS) for traj, p in zip(pool, preds)]
        assert all(o.index >= first_eps_optimal(traj.r, EPS) for o, traj in zip(outcomes, pool))
        assert np.mean([o.covered for o in outcomes]) == 1.0
    assert all(c == 1.0 for c in coverage_over_splits(preds, [t.r for t in pool], [t.nsols for t in pool],
                                                      alpha=0.2, eps=EPS, n_splits=20, seed=0))


def test_score_definition():
    r = np.array([0.5, 0.2, 0.1, 0.0, 0.0])
    pred = np.array([4.0, 6.0, 3.0, 1.0, 0.5])
    assert score(pred, r, EPS) == 3.0  # min of predictions before k* = 3
    assert score(pred, np.zeros(5), EPS) == 4.0  # k* = 0: the first prediction
    assert score(pred, np.ones(5), EPS) == 0.5  # never eps-optimal: every stop fails


def test_no_stop_before_first_incumbent(pool):
    for traj in pool:
        k = replay_stop(np.zeros(len(traj)), traj.nsols, tau=1.0)
        assert k == int(np.flatnonzero(traj.nsols >= 1)[0])


def test_outcomes_and_baselines(pool):
    traj = pool[0]
    k = 5
    outcome = stop_outcome(traj, k, rule="method", eps=EPS, inference_s=0.001)
    assert isinstance(outcome, StopOutcome) and outcome.stopped_early
    assert outcome.time == pytest.approx(traj.wall[k] + 0.006)
    assert outcome.objective == traj.ub[k] and outcome.gap == traj.r[k]
    per_sample = np.full(len(traj), 0.002)
    assert stop_outcome(traj, k, rule="m", eps=EPS, inference_s=per_sample).time == pytest.approx(traj.wall[k] + 0.012)

    mask = eligible_rows(traj)
    assert np.array_equal(algorithmic_gaps(traj)[mask], (traj.ub - traj.lb)[mask])
    assert np.all(algorithmic_gaps(traj)[~mask] == np.inf)
    first = int(np.flatnonzero(traj.nsols >= 1)[0])
    assert solution_limit_stop(traj, 1).index == first
    assert solution_limit_stop(traj, 10_000).index == len(traj) - 1

    times = np.arange(1.0, 40.0)  # n = 39: the 38th smallest
    assert time_limit_threshold(times, ALPHA) == 38.0
    assert time_limit_threshold(np.arange(1.0, 19.0), ALPHA) == math.inf
    t_eps = time_to_eps(traj, EPS)
    assert time_limit_stop(traj, t_eps, eps=EPS).covered
    early = time_limit_stop(traj, 0.5 * t_eps, eps=EPS)
    assert early.time == 0.5 * t_eps and early.stopped_early and not early.covered
    late = time_limit_stop(traj, math.inf, eps=EPS)
    assert not late.stopped_early and late.covered and late.time == traj.solve_time


def test_calibrated_gap_rule_and_splits(pool):
    preds = [algorithmic_gaps(t) for t in pool]
    tau, scores = calibrate(preds[:8], [t.r for t in pool[:8]], alpha=0.25, eps=EPS)
    assert len(scores) == 8 and tau == np.sort(scores)[quantile_index(8, 0.25) - 1]
    kwargs = {"alpha": 0.25, "eps": EPS, "n_splits": 30, "seed": 5}
    covs = coverage_over_splits(preds, [t.r for t in pool], [t.nsols for t in pool], **kwargs)
    assert len(covs) == 30 and all(0.0 <= c <= 1.0 for c in covs)
    assert covs == coverage_over_splits(preds, [t.r for t in pool], [t.nsols for t in pool], **kwargs)


def test_network_stopper_online_equals_replay_and_counts_its_inference(pool):
    model = random_model(hidden=6)
    normalizer = Normalizer.fit(pool)
    traj = pool[5]
    replay = model.predict(traj, normalizer)
    for tau, fires_at in ((-math.inf, None), (float(np.sort(replay[np.isfinite(replay)])[3]), None)):
        stopper = NetworkStopper(model, normalizer, tau, traj.bound)
        columns = {"t": traj.t, "lb": traj.lb, "ub": traj.ub, "nodes": traj.nodes}
        fired = [k for k in range(len(traj)) if stopper({c: v[: k + 1] for c, v in columns.items()})]
        assert np.allclose(stopper.predictions, replay, rtol=1e-5, atol=1e-7)
        assert stopper.inferences == int(eligible_rows(traj).sum()) and stopper.inference_s > 0
        first = replay_stop(replay, np.ones(len(traj)), tau)
        assert (fired[:1] == [first]) if np.isfinite(tau) else (fired == [] and not stopper.can_fire)


def test_scip_gap_and_fired_means_before_scip_would_finish(pool):
    assert scip_gap(-30.0, -30.0) == 0.0 and scip_gap(-30.0, -31.5) == pytest.approx(1.5 / 30)
    assert scip_gap(1.0, -1.0) == math.inf and scip_gap(0.0, -2.0) == math.inf
    traj = replace(pool[0], lb=pool[0].lb.copy())
    k = 10
    traj.lb[k] = traj.ub[k] - 1e-5 * abs(traj.ub[k])  # SCIP's gap within 1e-4: it would stop here by itself
    at_tolerance = stop_outcome(traj, k, rule="m", eps=EPS, solver_gap=1e-4)
    assert not at_tolerance.stopped_early and at_tolerance.time == traj.wall[k]
    assert stop_outcome(traj, k + 1, rule="m", eps=EPS, solver_gap=1e-4).stopped_early


def test_eligibility_gates_score_and_stop_alike(pool):
    """Rows that are not eligible predict +inf: they never set a score nor a stop."""
    traj = pool[2]
    preds = np.where(eligible_rows(traj), 5.0, np.inf)
    assert score(np.where(eligible_rows(traj), 1.0, np.inf), np.ones(len(traj)), EPS) == 1.0
    assert replay_stop(preds, traj.nsols, tau=10.0) == int(np.flatnonzero(eligible_rows(traj) & (traj.nsols >= 1))[0])
    assert score(np.full(len(traj), np.inf), traj.r, EPS) == np.inf, "no eligible row before k*: it cannot fail"
