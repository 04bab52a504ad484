"""DDSVM's training cost against its baselines (CE, cosine-CE) in one run, as ratios, and against the number of
training samples (k per class on the digits: three sizes), with the share spent in the SVM refits.

Each training runs in a forked child with one torch thread: its wall time, the time inside the SVM refits, and its
peak resident memory above the parent's at the fork (ru_maxrss, kB on Linux)."""
from __future__ import annotations

import multiprocessing
import resource
import time

import numpy as np

from .common import write_result

EPOCHS, REPEATS, K_RATIO, SIZES = 50, 3, 10, (10, 30, 100)
METHODS = ("ce", "cosine", "ddsvm")


def child(method: str, k: int, seed: int, queue) -> None:
    import torch

    from flows.ddsvm import training
    from flows.ddsvm.model import Architecture
    from tasks.train.few_shot import digit_images, per_class_split

    torch.set_num_threads(1)
    x, y = digit_images()
    train, _ = per_class_split(y, k, seed)
    fits = []
    fit = training.fit_ovr_svm

    def timed_fit(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fit(*args, **kwargs)
        finally:
            fits.append(time.perf_counter() - start)

    training.fit_ovr_svm = timed_fit
    architecture = Architecture("conv", (1, 8, 8), 64, 10, head="cosine" if method == "cosine" else "linear")
    result = training.train_network(torch.from_numpy(x[train]), torch.from_numpy(y[train]), architecture,
                                     training.TrainConfig(method, epochs=EPOCHS), seed)
    # the last fit is the read-out SVM after the loop, outside wall_time_s: only the refits inside count
    queue.put({"wall_time_s": result.wall_time_s, "refit_s": sum(fits[:-1]),
               "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss})


def measure(method: str, k: int, seed: int) -> dict:
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    process = context.Process(target=child, args=(method, k, seed, queue))
    process.start()
    row = queue.get()
    process.join()
    return row | {"extra_rss_mb": (row.pop("peak_rss_kb") - before) / 1024}


def main() -> dict:
    import sklearn.svm  # noqa: F401  (imported before the fork, as in the stage process)
    import torch  # noqa: F401

    ratio_runs = {m: [measure(m, K_RATIO, r) for r in range(REPEATS)] for m in METHODS}
    median = {m: float(np.median([r["wall_time_s"] for r in rows])) for m, rows in ratio_runs.items()}
    ratios = {f"{m}_over_ce": median[m] / median["ce"] for m in METHODS if m != "ce"}
    memory = {m: float(np.median([r["extra_rss_mb"] for r in rows])) for m, rows in ratio_runs.items()}
    scaling = []
    for k in SIZES:
        for method in ("ce", "ddsvm"):
            row = measure(method, k, 0)
            scaling.append({"k": k, "n_train": 10 * k, "method": method, **row,
                            "per_epoch_ms": 1e3 * row["wall_time_s"] / EPOCHS})
            print(f"k={k} (N={10 * k}) {method}: {row['wall_time_s']:.2f} s, refits {row['refit_s']:.2f} s", flush=True)
    result = {"epochs": EPOCHS, "k": K_RATIO, "repeats": REPEATS, "median_wall_time_s": median, "ratios": ratios,
              "median_extra_rss_mb": memory, "scaling": scaling}
    print(f"k={K_RATIO}, {EPOCHS} epochs: " + ", ".join(f"{m} {median[m]:.2f} s" for m in METHODS)
          + f"; ddsvm/ce x{ratios['ddsvm_over_ce']:.2f}, cosine/ce x{ratios['cosine_over_ce']:.2f}")
    print(f"-> {write_result('ddsvm', result)}")
    return result


if __name__ == "__main__":
    main()
