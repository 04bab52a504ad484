"""UniDrag surrogate vs the LBM it replaces: inference time per shape against one LBM run (the
speed-up that justifies a surrogate), the cost of one optimiser call (forward + backward), and
training throughput (shapes per second) of every surrogate kind on CPU, one torch thread.

Settings are the default profile's (stages/unidrag/params.yaml): grid, steps and bounce-back of the
data set's LBM; N_s / N_v points and the network size of its surrogates. Network weights are freshly
initialised and training targets random (timing does not depend on them); geometry is real (the
generator's shapes). Medians of repeats.
"""
from __future__ import annotations

import time
from functools import partial

import numpy as np
import torch

from flows.unidrag.params import Params
from flows.unidrag.pipeline import train_config
from flows.unidrag.surrogates import KINDS, build_model
from tasks.cfd.engines import run_lbm
from tasks.cfd.shape_opt import OptimSettings, apply, contour_normals, drag_force, identity, prepare
from tasks.cfd.surrogate.samples import Sample, Standardizer
from tasks.cfd.surrogate.training import TrainedSurrogate, predict_cd, train_surrogate
from tasks.cfd.vehicle_dataset import tunnel_body
from tasks.cfd.vehicles import sample_family
from tasks.core.device import single_torch_thread
from tasks.core.params import load_paper_params

from .common import ROOT, write_result

REPEATS = 5
TRAIN_STEPS = 5


def median_seconds(action, repeats: int = REPEATS) -> float:
    action()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def synthetic_samples(params: Params, count: int) -> list[Sample]:
    """Real contours and surface points of generated shapes, random label values."""
    rng = np.random.default_rng(0)
    samples, s = [], params.sampling
    for i, vehicle in enumerate(sample_family(max(1, count // 4), params.seed)[:count]):
        contour, _ = vehicle.contour(params.geometry.contour_points)
        points, normals = vehicle.contour(s.surface_points)
        volume = rng.uniform([-0.5, 0.0], [2.5, 1.0], (s.volume_points, 2))
        samples.append(Sample(i, vehicle.body_type, vehicle.vector(), contour, points, normals,
                              rng.normal(size=s.surface_points), volume, rng.normal(size=(s.volume_points, 3)),
                              float(rng.normal()), np.cumsum(rng.normal(size=params.solver.profile_bins)), vehicle.h_ref))
    return samples


def main() -> dict:
    single_torch_thread()
    params = load_paper_params(ROOT, "unidrag", "default", Params)
    vehicle = sample_family(1, params.seed)[0]
    lbm = run_lbm(params.solver.setup("cpu"), [tunnel_body(vehicle, params.solver.placement())])
    samples = synthetic_samples(params, 8)
    standardizer = Standardizer.fit(samples)
    config = train_config(params.surrogate, "unidrag", 0, params.sampling, params.solver.profile_bins)
    trained = TrainedSurrogate(config, build_model(config).eval(), standardizer)
    settings = OptimSettings(surface_points=params.sampling.surface_points, volume_points=params.sampling.volume_points)
    shape = prepare(vehicle.contour(params.geometry.contour_points)[0], settings)
    model, canonical = partial(predict_cd, trained), identity(shape, settings)
    inputs = apply(canonical, shape.pool, contour_normals(shape.pool), shape.volume_pool, shape.centre)

    def forward():
        with torch.no_grad():
            model(*inputs)

    def forward_backward():
        dP = torch.zeros(shape.lattice.size, 2, dtype=torch.float64, requires_grad=True)
        drag_force(model, shape, shape.pool + shape.phi @ dP, canonical).backward()

    inference_s, call_s = median_seconds(forward), median_seconds(forward_backward)
    training = []
    for kind in KINDS:
        kind_config = train_config(params.surrogate, kind, 0, params.sampling, params.solver.profile_bins).model_copy(
            update={"steps": TRAIN_STEPS})
        history = train_surrogate(kind_config, build_model, samples, [], standardizer).history
        training.append({"kind": kind, "seconds_per_step": history["seconds_per_step"],
                         "shapes_per_second": kind_config.batch / history["seconds_per_step"]})
        print(f"train {kind}: {training[-1]['shapes_per_second']:.1f} shapes/s", flush=True)
    result = {"torch": torch.__version__, "threads": torch.get_num_threads(), "repeats": REPEATS,
              "lbm": {"grid": list(params.solver.grid), "steps": params.solver.steps,
                      "bounce_back": params.solver.bounce_back, "wall_s": lbm.wall_time_s, "mlups": lbm.mlups},
              "surrogate": {"points": params.sampling.surface_points + params.sampling.volume_points,
                            "inference_s": inference_s, "forward_backward_s": call_s,
                            "speedup_vs_lbm": lbm.wall_time_s / inference_s},
              "training": training, "training_steps_timed": TRAIN_STEPS, "batch": config.batch}
    print(f"LBM {lbm.wall_time_s:.2f} s/shape, surrogate {1e3 * inference_s:.1f} ms/shape "
          f"({result['surrogate']['speedup_vs_lbm']:.0f}x), optimiser call {1e3 * call_s:.1f} ms", flush=True)
    print(f"-> {write_result('unidrag_surrogate', result)}")
    return result


if __name__ == "__main__":
    main()
