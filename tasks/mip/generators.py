"""Random MILP families written as MPS files (spec §5, §7).

Each family is a function `(rng, **size) -> pyscipopt.Model` that draws one instance from
`rng` alone, so `generate(family, size, seed, path)` is deterministic for a seed (same
numpy/networkx versions). The instance data the model was built from (edges, weights, costs)
is kept in `model.data`, so tests can check the formulation against a brute force on the
data itself. Real coefficients are rounded to 6 decimals: SCIP writes 15 significant digits,
so the MPS text then is the instance exactly, not an approximation of it.

Formulations (D-MIPLIB / Gasse et al. 2019 style; "our choice" marks simplifications):
- mis: max sum x_v, x_u + x_v <= 1 on G(n, p), n ~ U{n_min..n_max}.
- gisp: max sum reward x_v - cost sum_{E2} y_e; x_u + x_v <= 1 on E1, x_u + x_v - y_e <= 1 on E2,
  each edge of G(n, p) removable (in E2) with probability alpha.
- mvc: min sum w_v x_v, x_u + x_v >= 1, Barabasi-Albert graph, w ~ U(0, 1).
- cflp: Cornuejols-style capacitated facility location as in Gasse et al. (continuous assignment).
- setcover: min c.x, A x >= 1, Balas & Ho-style random A (see `setcover` for the coverage rule).
- cauction: max p.x, each item in at most one accepted bid; a simplified Leyton-Brown
  "arbitrary relationships" bid generator (see `cauction`).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import numpy as np
from pyscipopt import Model, quicksum

DECIMALS = 6


def _model(name: str) -> Model:
    model = Model(name)
    model.hideOutput()
    return model


def _require(ok: bool, family: str, key: str, rule: str, value) -> None:
    if not ok:
        raise ValueError(f"{family}: size key {key!r} must be {rule}, got {value!r}")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _er_edges(rng: np.random.Generator, n: int, p: float) -> np.ndarray:
    """Edges (u < v, lexicographic) of an Erdos-Renyi G(n, p) graph, shape (m, 2)."""
    u, v = np.triu_indices(n, k=1)
    keep = rng.random(len(u)) < p
    return np.column_stack([u[keep], v[keep]]).astype(np.int64)


def mis(rng: np.random.Generator, *, n_min: int = 85, n_max: int = 95, p: float = 0.1) -> Model:
    """Maximum independent set on G(n, p), n ~ U{n_min..n_max} (spec §6's CPU family)."""
    _require(_is_int(n_min) and n_min >= 1, "mis", "n_min", "an integer >= 1", n_min)
    _require(_is_int(n_max) and n_max >= n_min, "mis", "n_max", f"an integer >= n_min={n_min}", n_max)
    _require(0.0 <= p <= 1.0, "mis", "p", "in [0, 1]", p)
    n = int(rng.integers(n_min, n_max + 1))
    edges = _er_edges(rng, n, p)
    model = _model("mis")
    x = [model.addVar(f"x{v}", vtype="B") for v in range(n)]
    for u, v in edges:
        model.addCons(x[u] + x[v] <= 1, name=f"e{u}_{v}")
    model.setObjective(quicksum(x), "maximize")
    model.data = {"n": n, "n_edges": len(edges), "edges": edges}
    return model


def gisp(rng: np.random.Generator, *, n: int = 75, p: float = 0.5, alpha: float = 0.75,
         reward: float = 100.0, cost: float = 1.0) -> Model:
    """Generalized independent set: an edge in E2 may be violated at a price (y_e = 1)."""
    _require(_is_int(n) and n >= 1, "gisp", "n", "an integer >= 1", n)
    _require(0.0 <= p <= 1.0, "gisp", "p", "in [0, 1]", p)
    _require(0.0 <= alpha <= 1.0, "gisp", "alpha", "in [0, 1]", alpha)
    _require(reward > 0, "gisp", "reward", "> 0", reward)
    _require(cost >= 0, "gisp", "cost", ">= 0", cost)
    edges = _er_edges(rng, n, p)
    removable = rng.random(len(edges)) < alpha
    model = _model("gisp")
    x = [model.addVar(f"x{v}", vtype="B") for v in range(n)]
    y = []
    for (u, v), is_e2 in zip(edges, removable):
        if is_e2:
            y.append(model.addVar(f"y{u}_{v}", vtype="B"))
            model.addCons(x[u] + x[v] - y[-1] <= 1, name=f"e2_{u}_{v}")
        else:
            model.addCons(x[u] + x[v] <= 1, name=f"e1_{u}_{v}")
    model.setObjective(reward * quicksum(x) - cost * quicksum(y), "maximize")
    model.data = {"n": n, "n_edges": len(edges), "n_removable": int(removable.sum()),
                  "edges": edges, "removable": removable, "reward": reward, "cost": cost}
    return model


def mvc(rng: np.random.Generator, *, n: int = 500, m_attach: int = 4) -> Model:
    """Weighted minimum vertex cover on a Barabasi-Albert graph, weights U(0, 1)."""
    _require(_is_int(n) and n >= 2, "mvc", "n", "an integer >= 2", n)
    _require(_is_int(m_attach) and 1 <= m_attach < n, "mvc", "m_attach", f"an integer in [1, n={n})", m_attach)
    graph = nx.barabasi_albert_graph(n, m_attach, seed=int(rng.integers(2**31)))
    edges = np.array(sorted((min(e), max(e)) for e in graph.edges()), dtype=np.int64).reshape(-1, 2)
    weights = np.round(rng.random(n), DECIMALS)
    model = _model("mvc")
    x = [model.addVar(f"x{v}", vtype="B") for v in range(n)]
    for u, v in edges:
        model.addCons(x[u] + x[v] >= 1, name=f"e{u}_{v}")
    model.setObjective(quicksum(float(w) * xv for w, xv in zip(weights, x)), "minimize")
    model.data = {"n": n, "n_edges": len(edges), "edges": edges, "weights": weights}
    return model


def cflp(rng: np.random.Generator, *, n_customers: int = 100, n_facilities: int = 100,
         ratio: float = 5.0) -> Model:
    """Capacitated facility location (Cornuejols et al. 1991, as generated by Gasse et al. 2019).

    Points uniform in the unit square; demand U{5..35}; capacity U{10..160} rescaled so that
    total capacity = ratio * total demand; fixed cost U{100..110} sqrt(capacity) + U{0..90};
    transport cost 10 * distance * demand. x_ij in [0, 1] is the (continuous) share of customer
    i served by facility j; the redundant total-capacity and x_ij <= y_j rows tighten the LP.
    """
    _require(_is_int(n_customers) and n_customers >= 1, "cflp", "n_customers", "an integer >= 1", n_customers)
    _require(_is_int(n_facilities) and n_facilities >= 1, "cflp", "n_facilities", "an integer >= 1", n_facilities)
    _require(ratio >= 1.0, "cflp", "ratio", ">= 1", ratio)
    cust = rng.random((n_customers, 2))
    fac = rng.random((n_facilities, 2))
    demand = rng.integers(5, 36, size=n_customers)
    capacity = rng.integers(10, 161, size=n_facilities)
    fixed = (rng.integers(100, 111, size=n_facilities) * np.sqrt(capacity)
             + rng.integers(0, 91, size=n_facilities)).astype(np.int64)
    capacity = (capacity * ratio * demand.sum() / capacity.sum()).astype(np.int64)
    _require(capacity.sum() >= demand.sum(), "cflp", "ratio", "large enough for total capacity >= demand", ratio)
    dist = np.linalg.norm(cust[:, None, :] - fac[None, :, :], axis=2)
    transport = np.round(10.0 * dist * demand[:, None], DECIMALS)

    model = _model("cflp")
    y = [model.addVar(f"y{j}", vtype="B") for j in range(n_facilities)]
    x = [[model.addVar(f"x{i}_{j}", vtype="C", lb=0.0, ub=1.0) for j in range(n_facilities)]
         for i in range(n_customers)]
    for i in range(n_customers):
        model.addCons(quicksum(x[i]) >= 1, name=f"demand{i}")
    for j in range(n_facilities):
        model.addCons(quicksum(int(demand[i]) * x[i][j] for i in range(n_customers)) <= int(capacity[j]) * y[j],
                      name=f"capacity{j}")
    model.addCons(quicksum(int(capacity[j]) * y[j] for j in range(n_facilities)) >= int(demand.sum()),
                  name="total_capacity")
    for i in range(n_customers):
        for j in range(n_facilities):
            model.addCons(x[i][j] <= y[j], name=f"tight{i}_{j}")
    model.setObjective(quicksum(int(fixed[j]) * y[j] for j in range(n_facilities))
                       + quicksum(float(transport[i, j]) * x[i][j]
                                  for i in range(n_customers) for j in range(n_facilities)), "minimize")
    model.data = {"n_customers": n_customers, "n_facilities": n_facilities, "demand": demand,
                  "capacity": capacity, "fixed": fixed, "transport": transport}
    return model


def _cover_matrix(rng: np.random.Generator, rows: int, cols: int, density: float) -> np.ndarray:
    """0/1 matrix with every row hit by >= 2 columns and every column in >= 1 row, then topped up
    with uniformly random entries to density * rows * cols nonzeros."""
    a = np.zeros((rows, cols), dtype=bool)
    a[rng.integers(rows, size=cols), np.arange(cols)] = True
    for r in range(rows):
        a[r, rng.choice(cols, size=2, replace=False)] = True
    missing = int(density * rows * cols) - int(a.sum())
    if missing > 0:
        zeros = np.flatnonzero(~a)
        a.flat[rng.choice(zeros, size=min(missing, len(zeros)), replace=False)] = True
    return a


def setcover(rng: np.random.Generator, *, rows: int = 500, cols: int = 1000, density: float = 0.05,
             max_cost: int = 100) -> Model:
    """Set cover min c.x, A x >= 1, costs U{1..max_cost} (Balas & Ho style, as in Gasse et al.).

    Our choice, following the brief: every row is covered by >= 2 columns and every column covers
    >= 1 row (Gasse et al. force >= 2 rows per column and >= 1 column per row instead); the
    remaining nonzeros are placed uniformly at random.
    """
    _require(_is_int(rows) and rows >= 1, "setcover", "rows", "an integer >= 1", rows)
    _require(_is_int(cols) and cols >= 2, "setcover", "cols", "an integer >= 2", cols)
    _require(0.0 <= density <= 1.0, "setcover", "density", "in [0, 1]", density)
    _require(_is_int(max_cost) and max_cost >= 1, "setcover", "max_cost", "an integer >= 1", max_cost)
    a = _cover_matrix(rng, rows, cols, density)
    costs = rng.integers(1, max_cost + 1, size=cols)
    model = _model("setcover")
    x = [model.addVar(f"x{j}", vtype="B") for j in range(cols)]
    for r in range(rows):
        model.addCons(quicksum(x[j] for j in np.flatnonzero(a[r])) >= 1, name=f"row{r}")
    model.setObjective(quicksum(int(c) * xj for c, xj in zip(costs, x)), "minimize")
    model.data = {"rows": rows, "cols": cols, "nnz": int(a.sum()), "matrix": a, "costs": costs}
    return model


def _draw_bundle(rng: np.random.Generator, values: np.ndarray, compat: np.ndarray,
                 add_item_prob: float) -> list[int]:
    """First item with probability proportional to its value; then, while a coin with
    add_item_prob says so, add an item with probability proportional to its summed
    compatibility with the items already in the bundle."""
    bundle = [int(rng.choice(len(values), p=values / values.sum()))]
    while len(bundle) < len(values) and rng.random() < add_item_prob:
        weights = compat[bundle].sum(axis=0)
        weights[bundle] = 0.0
        bundle.append(int(rng.choice(len(values), p=weights / weights.sum())))
    return sorted(bundle)


def cauction(rng: np.random.Generator, *, n_items: int = 100, n_bids: int = 500, add_item_prob: float = 0.65,
             deviation: float = 0.5, additivity: float = 0.2) -> Model:
    """Combinatorial auction (winner determination): max sum price_b x_b, each item sold at most once.

    Simplified Leyton-Brown "arbitrary relationships" generator (our choice): common item
    values U(1, 100); a random symmetric item compatibility matrix; bundles grown as in
    `_draw_bundle`; a bid's price is the sum of private values (common value times
    U(1 - deviation, 1 + deviation)) plus |bundle|^(1 + additivity). Left out versus
    Leyton-Brown / Gasse et al.: substitutable (XOR) bids with dummy items, per-bidder budgets and
    resale-value filtering, and the bidder model itself (each bid is its own bidder). Duplicate
    bundles are redrawn; ValueError if n_bids distinct bundles are not found in 100 * n_bids draws.
    """
    _require(_is_int(n_items) and n_items >= 1, "cauction", "n_items", "an integer >= 1", n_items)
    _require(_is_int(n_bids) and n_bids >= 1, "cauction", "n_bids", "an integer >= 1", n_bids)
    _require(0.0 <= add_item_prob < 1.0, "cauction", "add_item_prob", "in [0, 1)", add_item_prob)
    _require(0.0 <= deviation < 1.0, "cauction", "deviation", "in [0, 1)", deviation)
    _require(additivity >= -1.0, "cauction", "additivity", ">= -1", additivity)
    values = 1.0 + 99.0 * rng.random(n_items)
    compat = rng.random((n_items, n_items))
    compat = (compat + compat.T) / 2.0
    np.fill_diagonal(compat, 0.0)
    bundles: list[list[int]] = []
    prices: list[float] = []
    seen: set[tuple[int, ...]] = set()
    for _ in range(100 * n_bids):
        if len(bundles) == n_bids:
            break
        bundle = _draw_bundle(rng, values, compat, add_item_prob)
        private = values[bundle] * (1.0 + deviation * (2.0 * rng.random(len(bundle)) - 1.0))
        if tuple(bundle) in seen:
            continue
        seen.add(tuple(bundle))
        bundles.append(bundle)
        prices.append(round(float(private.sum() + len(bundle) ** (1.0 + additivity)), DECIMALS))
    _require(len(bundles) == n_bids, "cauction", "n_bids",
             f"reachable with distinct bundles over n_items={n_items} (found {len(bundles)})", n_bids)

    model = _model("cauction")
    x = [model.addVar(f"b{b}", vtype="B") for b in range(n_bids)]
    bids_of_item: list[list[int]] = [[] for _ in range(n_items)]
    for b, bundle in enumerate(bundles):
        for item in bundle:
            bids_of_item[item].append(b)
    for item, bids in enumerate(bids_of_item):
        if bids:
            model.addCons(quicksum(x[b] for b in bids) <= 1, name=f"item{item}")
    model.setObjective(quicksum(p * xb for p, xb in zip(prices, x)), "maximize")
    model.data = {"n_items": n_items, "n_bids": n_bids, "bundles": bundles, "prices": np.array(prices)}
    return model


GENERATORS: dict[str, Callable[..., Model]] = {
    "mis": mis, "gisp": gisp, "mvc": mvc, "cflp": cflp, "setcover": setcover, "cauction": cauction,
}
FAMILIES = frozenset(GENERATORS)


def size_keys(family: str) -> dict:
    """The size keys a family accepts, with their defaults."""
    if family not in GENERATORS:
        raise ValueError(f"unknown family {family!r}; allowed: {sorted(FAMILIES)}")
    params = list(inspect.signature(GENERATORS[family]).parameters.values())[1:]
    return {p.name: p.default for p in params}


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value


def _check_readable(path: Path, n_vars: int, n_cons: int) -> None:
    """SCIP picks the writer from the file suffix and can write formats it cannot read back,
    so read the file once and compare the counts."""
    back = _model(path.stem)
    back.readProblem(str(path))
    if (back.getNVars(), back.getNConss()) != (n_vars, n_cons):
        raise RuntimeError(f"{path}: read back {back.getNVars()} vars / {back.getNConss()} cons, "
                           f"wrote {n_vars} / {n_cons}")


def generate(family: str, size: dict, seed: int, path: Path) -> dict:
    """Draw one instance of `family` with rng = default_rng(seed), write it as MPS to `path`
    and return its metadata: family, seed, sense, n_vars, n_cons, the resolved size keys and
    the family's drawn scalars (e.g. mis's n, n_edges)."""
    allowed = size_keys(family)
    unknown = sorted(set(size) - set(allowed))
    if unknown:
        raise ValueError(f"{family}: unknown size key(s) {unknown}; allowed: {sorted(allowed)}")
    if not (_is_int(seed) and seed >= 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    path = Path(path)
    if path.suffix != ".mps":
        raise ValueError(f"path must end in .mps (SCIP picks the format from the suffix), got {path}")
    model = GENERATORS[family](np.random.default_rng(seed), **size)
    path.parent.mkdir(parents=True, exist_ok=True)
    model.writeProblem(str(path), verbose=False)
    n_vars, n_cons = model.getNVars(), model.getNConss()
    _check_readable(path, n_vars, n_cons)
    drawn = {k: _scalar(v) for k, v in model.data.items() if np.isscalar(v)}
    return {"family": family, "seed": int(seed), "sense": model.getObjectiveSense(),
            "n_vars": n_vars, "n_cons": n_cons, **allowed, **size, **drawn}
