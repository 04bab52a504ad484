"""FedCDWA against FedAvg and FedProto in one run (in-process engine, digits, alpha 0.5): wall time per round and
communication bytes per round, at K = 5, 10, 20 clients; the server's HWA (POT barycenters) per round vs K; and the
client summary's k-means (tasks/federated/kmeans.py) against scikit-learn's KMeans on the same points."""
from __future__ import annotations

import time
from time import perf_counter

import numpy as np

from flows.fedcdwa.config import FedConfig
from flows.fedcdwa.data import digits_federation, digits_partition
from flows.fedcdwa.engine import run_inprocess
from flows.fedcdwa.hwa import aggregate
from tasks.federated.kmeans import kmeans

from .common import write_result

ROUNDS, ALPHA, SIZES, METHODS = 3, 0.5, (5, 10, 20), ("fedavg", "fedproto", "fedcdwa")


def kmeans_ratio(repeats: int = 200) -> dict:
    """Ours vs sklearn KMeans(3, n_init=1) on 30 points in 32-D, the size of one client class."""
    from sklearn.cluster import KMeans

    points = np.random.default_rng(0).normal(size=(30, 32))
    start = perf_counter()
    for k in range(repeats):
        kmeans(points, 3, np.random.default_rng(k))
    ours = (perf_counter() - start) / repeats
    start = perf_counter()
    for k in range(repeats // 10):
        KMeans(3, n_init=1, random_state=k).fit(points)
    theirs = (perf_counter() - start) / (repeats // 10)
    return {"ours_ms": ours * 1e3, "sklearn_ms": theirs * 1e3, "ratio_sklearn_over_ours": theirs / ours}


def hwa_time(clients: int, repeats: int = 5) -> float:
    """One round's HWA (10 classes, J = J_bar = 3, D = 32) over `clients` clients holding every class."""
    rng = np.random.default_rng(clients)
    C, J, D = 10, 3, 32
    args = (rng.integers(1, 20, (clients, C)), rng.normal(size=(clients, C, D)), rng.random((clients, C, D)),
            rng.normal(size=(clients, C, J, D)), np.full((clients, C, J), 1 / J))
    start = perf_counter()
    for k in range(repeats):
        aggregate(*args, n_support=3, rng=np.random.default_rng(k))
    return (perf_counter() - start) / repeats


def main() -> dict:
    warm = digits_federation(digits_partition(2, ALPHA, 0))
    for method in METHODS:  # first calls pay for imports and allocator set-up: not part of any method's time
        run_inprocess(FedConfig(method=method, rounds=1, local_epochs=1), warm, 0)
    rows = []
    for clients in SIZES:
        federation = digits_federation(digits_partition(clients, ALPHA, 0))
        for method in METHODS:
            result = run_inprocess(FedConfig(method=method, rounds=ROUNDS), federation, 0)
            rows.append({"clients": clients, "method": method, "round_time_s": result.wall_time_s / ROUNDS,
                         "bytes_up_per_round": result.bytes_up_per_round,
                         "bytes_down_per_round": result.bytes_down_per_round})
            print(f"K={clients} {method}: {rows[-1]['round_time_s']:.2f} s/round, "
                  f"{result.bytes_up_per_round / 1e3:.0f} kB up, {result.bytes_down_per_round / 1e3:.0f} kB down", flush=True)
    by = {(r["clients"], r["method"]): r for r in rows}
    ratios = {f"K{k}": {"time_fedcdwa_over_fedavg": by[k, "fedcdwa"]["round_time_s"] / by[k, "fedavg"]["round_time_s"],
                        "bytes_up_fedcdwa_over_fedavg": by[k, "fedcdwa"]["bytes_up_per_round"] / by[k, "fedavg"]["bytes_up_per_round"],
                        "bytes_down_fedcdwa_over_fedavg": by[k, "fedcdwa"]["bytes_down_per_round"] / by[k, "fedavg"]["bytes_down_per_round"],
                        "bytes_up_fedproto_over_fedavg": by[k, "fedproto"]["bytes_up_per_round"] / by[k, "fedavg"]["bytes_up_per_round"]}
              for k in SIZES}
    result = {"setting": {"rounds": ROUNDS, "alpha": ALPHA, "local_epochs": 2, "engine": "inprocess", "threads": 1},
              "runs": rows, "ratios": ratios,
              "hwa_server_s_per_round": {f"K{k}": hwa_time(k) for k in SIZES}, "kmeans": kmeans_ratio(),
              "note": "wall times on a shared, loaded 2-core machine"}
    for k, r in ratios.items():
        print(f"{k}: time x{r['time_fedcdwa_over_fedavg']:.2f}, bytes up x{r['bytes_up_fedcdwa_over_fedavg']:.3f}")
    print(f"-> {write_result('fedcdwa', result)}  ({time.strftime('%H:%M:%S')})")
    return result


if __name__ == "__main__":
    main()
