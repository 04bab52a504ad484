"""Instance generators (spec §5): SCIP's optimum read from the written MPS file
equals a brute force on the instance data, MPS round trip, determinism, input checks."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pyscipopt import Model
from scipy.optimize import linprog

from tasks.mip.generators import FAMILIES, GENERATORS, generate, size_keys

TINY = {
    "mis": {"n_min": 12, "n_max": 12, "p": 0.3},
    "gisp": {"n": 10, "p": 0.5, "alpha": 0.75},
    "mvc": {"n": 12, "m_attach": 2},
    "cflp": {"n_customers": 5, "n_facilities": 4, "ratio": 2.0},
    "setcover": {"rows": 8, "cols": 12, "density": 0.25},
    "cauction": {"n_items": 6, "n_bids": 12},
}


def scip_optimum(path: Path) -> tuple[float, Model]:
    """Solve the MPS file to proven optimality (gap 0), as a check independent of solver.py."""
    model = Model()
    model.hideOutput()
    model.readProblem(str(path))
    model.setParam("limits/gap", 0.0)
    model.optimize()
    assert model.getStatus() == "optimal"
    return model.getObjVal(), model


def build(family: str, seed: int, tmp_path: Path) -> tuple[dict, float]:
    """The instance data drawn for `seed` and SCIP's optimum of the MPS file generate() writes."""
    data = GENERATORS[family](np.random.default_rng(seed), **TINY[family]).data
    path = tmp_path / f"{family}_{seed}.mps"
    generate(family, TINY[family], seed, path)
    return data, scip_optimum(path)[0]


def assignments(n: int) -> np.ndarray:
    """All 2^n 0/1 vectors, shape (2^n, n)."""
    return (np.arange(2**n)[:, None] >> np.arange(n)) & 1


def violates(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Rows of x that take both ends of some edge."""
    if len(edges) == 0:
        return np.zeros(len(x), dtype=bool)
    return ((x[:, edges[:, 0]] + x[:, edges[:, 1]]) > 1).any(axis=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mis_matches_brute_force(seed, tmp_path):
    data, scip = build("mis", seed, tmp_path)
    x = assignments(data["n"])
    assert scip == pytest.approx(x[~violates(x, data["edges"])].sum(axis=1).max())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gisp_matches_brute_force(seed, tmp_path):
    """Enumerate x; the cheapest feasible y sets y_e = x_u x_v on E2 (edge costs are >= 0)."""
    data, scip = build("gisp", seed, tmp_path)
    x = assignments(data["n"])
    e1, e2 = data["edges"][~data["removable"]], data["edges"][data["removable"]]
    y = x[:, e2[:, 0]] * x[:, e2[:, 1]]
    value = data["reward"] * x.sum(axis=1) - data["cost"] * y.sum(axis=1)
    assert len(e1) > 0 and len(e2) > 0
    assert scip == pytest.approx(value[~violates(x, e1)].max())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mvc_matches_brute_force(seed, tmp_path):
    data, scip = build("mvc", seed, tmp_path)
    x = assignments(data["n"])
    edges = data["edges"]
    covers = ((x[:, edges[:, 0]] + x[:, edges[:, 1]]) >= 1).all(axis=1)
    assert scip == pytest.approx((x[covers] @ data["weights"]).min(), abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_setcover_matches_brute_force(seed, tmp_path):
    data, scip = build("setcover", seed, tmp_path)
    a = data["matrix"]
    assert (a.sum(axis=1) >= 2).all() and (a.sum(axis=0) >= 1).all()
    x = assignments(data["cols"])
    covers = ((x @ a.T.astype(int)) >= 1).all(axis=1)
    assert scip == pytest.approx((x[covers] @ data["costs"]).min())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cauction_matches_brute_force(seed, tmp_path):
    data, scip = build("cauction", seed, tmp_path)
    incidence = np.zeros((data["n_bids"], data["n_items"]), dtype=int)
    for b, bundle in enumerate(data["bundles"]):
        incidence[b, bundle] = 1
    assert len({tuple(b) for b in data["bundles"]}) == data["n_bids"]
    x = assignments(data["n_bids"])
    feasible = ((x @ incidence) <= 1).all(axis=1)
    assert scip == pytest.approx((x[feasible] @ data["prices"]).max(), abs=1e-9)


def cflp_transport(data: dict, open_: np.ndarray) -> float:
    """Cheapest fractional assignment to the open facilities (an LP), inf if infeasible."""
    n_c = data["transport"].shape[0]
    idx = np.flatnonzero(open_)
    if data["capacity"][idx].sum() < data["demand"].sum():
        return np.inf
    k = len(idx)
    a_eq = np.kron(np.eye(n_c), np.ones(k))
    a_ub = np.kron(data["demand"][None, :], np.eye(k))  # row j: sum_i demand_i x_ij
    res = linprog(data["transport"][:, idx].ravel(), A_ub=a_ub, b_ub=data["capacity"][idx],
                  A_eq=a_eq, b_eq=np.ones(n_c), bounds=(0, 1), method="highs")
    return res.fun if res.status == 0 else np.inf


def cflp_greedy(data: dict) -> float:
    """Open facilities by fixed cost per unit of capacity until demand is covered, then give each
    customer (largest demand first) to its nearest open facilities with room left."""
    order = np.argsort(data["fixed"] / data["capacity"])
    need = np.searchsorted(np.cumsum(data["capacity"][order]), data["demand"].sum()) + 1
    open_ = order[:need]
    room = data["capacity"].astype(float).copy()
    cost = float(data["fixed"][open_].sum())
    for i in np.argsort(-data["demand"]):
        left = 1.0
        for j in open_[np.argsort(data["transport"][i, open_])]:
            share = min(left, room[j] / data["demand"][i])
            room[j] -= share * data["demand"][i]
            cost += share * data["transport"][i, j]
            left -= share
        assert left < 1e-9
    return cost


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cflp_matches_enumeration_and_beats_greedy(seed, tmp_path):
    """Enumerating the open facility sets, each with an LP for the assignment, is exact."""
    data, scip = build("cflp", seed, tmp_path)
    n_f = data["transport"].shape[1]
    best = min(data["fixed"] @ open_ + cflp_transport(data, open_) for open_ in assignments(n_f))
    assert scip == pytest.approx(best, rel=1e-7)
    assert scip <= cflp_greedy(data) + 1e-6
    assert data["capacity"].sum() >= 2.0 * data["demand"].sum() - n_f


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_mps_round_trip_and_metadata(family, tmp_path):
    path = tmp_path / "inst.mps"
    meta = generate(family, TINY[family], 7, path)
    model = GENERATORS[family](np.random.default_rng(7), **TINY[family])
    back = Model()
    back.hideOutput()
    back.readProblem(str(path))
    assert (back.getNVars(), back.getNConss()) == (model.getNVars(), model.getNConss())
    assert (meta["n_vars"], meta["n_cons"]) == (model.getNVars(), model.getNConss())
    assert back.getObjectiveSense() == model.getObjectiveSense() == meta["sense"]
    assert meta["sense"] in ("minimize", "maximize")
    assert {v.name: v.vtype() for v in back.getVars()} == {v.name: v.vtype() for v in model.getVars()}
    assert meta["family"] == family and meta["seed"] == 7
    assert set(size_keys(family)) <= set(meta)
    model.optimize()
    assert scip_optimum(path)[0] == pytest.approx(model.getObjVal(), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_deterministic_per_seed(family, tmp_path):
    a, b, c = (tmp_path / f"{name}.mps" for name in "abc")
    generate(family, TINY[family], 3, a)
    generate(family, TINY[family], 3, b)
    generate(family, TINY[family], 4, c)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_default_sizes_generate(tmp_path):
    """Every family's default size (the Gasse et al. / D-MIPLIB scale) writes a readable file."""
    for family in sorted(FAMILIES):
        meta = generate(family, {}, 0, tmp_path / f"{family}.mps")
        assert meta["n_vars"] > 0 and meta["n_cons"] > 0


def test_mis_size_range(tmp_path):
    ns = {generate("mis", {"n_min": 50, "n_max": 60, "p": 0.12}, s, tmp_path / "m.mps")["n"] for s in range(30)}
    assert min(ns) >= 50 and max(ns) <= 60 and len(ns) > 3


def test_bad_family_names_allowed(tmp_path):
    with pytest.raises(ValueError, match=r"'knapsack'.*cauction.*mis"):
        generate("knapsack", {}, 0, tmp_path / "x.mps")


def test_bad_size_key_names_it_and_allowed(tmp_path):
    with pytest.raises(ValueError, match=r"\['nodes'\].*\['n_max', 'n_min', 'p'\]"):
        generate("mis", {"nodes": 10}, 0, tmp_path / "x.mps")


@pytest.mark.parametrize("family, size, key", [
    ("mis", {"p": 1.5}, "p"), ("mis", {"n_min": 10, "n_max": 5}, "n_max"), ("mvc", {"n": 4, "m_attach": 4}, "m_attach"),
    ("cflp", {"ratio": 0.5}, "ratio"), ("setcover", {"cols": 1}, "cols"), ("cauction", {"n_items": 2, "n_bids": 5}, "n_bids"),
])
def test_bad_size_value_names_key(family, size, key, tmp_path):
    with pytest.raises(ValueError, match=rf"{family}: size key '{key}'"):
        generate(family, size, 0, tmp_path / "x.mps")


def test_path_must_be_mps(tmp_path):
    with pytest.raises(ValueError, match=r"\.mps"):
        generate("mis", TINY["mis"], 0, tmp_path / "x.lp")

