"""Shape optimisation (spec §3.4, §10 Surrogate/optimisation): the FFD displacement bound,
projection onto C1-C3 and backtracking onto C4, EoT transformations that preserve what a point is
(surface point on the surface with its normal, volume point in the fluid), K = 1 identity EoT equal
to the no-EoT objective, and the three methods through a real (untrained, tiny) Transolver surrogate."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from shapely import Polygon, contains_xy, distance
from shapely import points as shapely_points

from tasks.cfd.constraints import constraints_hold, polygon_area, project_controls
from tasks.cfd.ffd import deform
from tasks.cfd.shape_opt import (
    OptimSettings,
    apply,
    backtrack,
    contour_normals,
    frontal_height,
    identity,
    objective,
    optimise,
    prepare,
    sample_transformation,
)
from tasks.cfd.vehicles import sample_vehicle

SETTINGS = OptimSettings(steps=3, transformations=2, delta_max=0.06, surface_points=32, volume_points=48, seed=3)


@pytest.fixture(scope="module")
def shape():
    contour, _ = sample_vehicle("notchback", np.random.default_rng(5)).contour(512)
    return prepare(contour, SETTINGS)


def random_controls(shape, scale, seed):
    generator = torch.Generator().manual_seed(seed)
    return scale * (2 * torch.rand(shape.lattice.size, 2, generator=generator, dtype=torch.float64) - 1)


def test_pool_normals_and_reference_height_match_the_vehicle():
    vehicle = sample_vehicle("fastback", np.random.default_rng(1))
    contour, normals = vehicle.contour(400)
    shape = prepare(contour, SETTINGS)
    assert shape.pool.shape == (4 * 32, 2) and shape.phi.shape == (128, 32)
    ours = contour_normals(torch.as_tensor(contour)).numpy()
    assert np.median(np.sum(ours * normals, 1)) > 0.999  # same outward normals as the data set's
    assert shape.a_ref0 == pytest.approx(vehicle.h_ref, abs=2e-3)
    with pytest.raises(ValueError, match="counter-clockwise"):
        prepare(contour[::-1], SETTINGS)


def test_projection_bounds_every_surface_displacement_and_backtracking_restores_the_area(shape):
    for seed in range(5):
        dP = project_controls(random_controls(shape, 0.3, seed), shape.lattice, SETTINGS.delta_max)
        assert constraints_hold(dP, shape.lattice, SETTINGS.delta_max)
        deformed = deform(shape.pool, shape.phi, dP)
        assert (deformed - shape.pool).norm(dim=1).max() <= SETTINGS.delta_max + 1e-12  # C1 on the surface
        assert torch.equal(deformed[:, 0], shape.pool[:, 0])  # C2: no streamwise motion
        fixed, count = backtrack(shape, dP, SETTINGS)
        ratio = polygon_area(deform(shape.pool, shape.phi, fixed)) / shape.area0
        assert abs(ratio - 1) <= SETTINGS.volume_tolerance
        torch.testing.assert_close(fixed, SETTINGS.backtrack_factor ** count * dP)  # a pure scaling keeps C1-C3
    swollen = project_controls(torch.full_like(dP, 0.06), shape.lattice, 0.06)  # every free point pushed up
    _, count = backtrack(shape, swollen, SETTINGS)
    assert count > 0


def test_volume_pool_stays_in_the_fluid_for_every_feasible_deformation(shape):
    deformed = deform(shape.pool, shape.phi, project_controls(random_controls(shape, 1.0, 7), shape.lattice,
                                                              SETTINGS.delta_max)).numpy()
    volume = shape.volume_pool.numpy()
    assert len(volume) == 4 * 48
    assert not contains_xy(Polygon(deformed), volume[:, 0], volume[:, 1]).any()
    assert distance(Polygon(shape.pool.numpy()).exterior, shapely_points(volume)).min() > SETTINGS.delta_max


def test_eot_transformations_preserve_labels(shape):
    generator = torch.Generator().manual_seed(0)
    deformed = deform(shape.pool, shape.phi, project_controls(random_controls(shape, 1.0, 8), shape.lattice, 0.06))
    normals = contour_normals(deformed)
    size = float((deformed.max(0).values - deformed.min(0).values).norm())
    for _ in range(10):
        t = sample_transformation(shape, SETTINGS, generator)
        assert abs(t.shift) <= SETTINGS.shift and abs(t.scale - 1) <= SETTINGS.scale
        assert len(set(t.surface_index.tolist())) == SETTINGS.surface_points
        assert len(set(t.volume_index.tolist())) == SETTINGS.volume_points
        surface, surface_normals, volume, contour = apply(t, deformed, normals, shape.volume_pool, shape.centre)
        # surface points: on the surface to within the transformation's size, with the surface's own normals
        bound = SETTINGS.shift + SETTINGS.scale * size + 5 * SETTINGS.jitter
        assert (surface - deformed[t.surface_index]).norm(dim=1).max() <= bound
        assert torch.equal(surface_normals, normals[t.surface_index])
        # the transformed contour is the same shape: same area up to scale^2, same orientation
        torch.testing.assert_close(polygon_area(contour), t.scale ** 2 * polygon_area(deformed))
        # volume points: still in the fluid around the transformed body
        assert not contains_xy(Polygon(contour.numpy()), volume[:, 0].numpy(), volume[:, 1].numpy()).any()


def test_identity_uses_the_training_like_point_set(shape):
    t = identity(shape, SETTINGS)
    surface, _, volume, contour = apply(t, shape.pool, contour_normals(shape.pool), shape.volume_pool, shape.centre)
    assert torch.equal(surface, shape.pool[::4]) and torch.equal(contour, shape.pool)
    assert torch.equal(volume, shape.volume_pool[:SETTINGS.volume_points])
    assert frontal_height(contour) == shape.a_ref0


def test_settings_name_the_bad_field():
    with pytest.raises(ValueError, match="method"):
        OptimSettings(method="adam")
    with pytest.raises(ValueError, match="delta_max"):
        OptimSettings(delta_max=0)
    with pytest.raises(ValueError, match="backtrack_factor"):
        OptimSettings(backtrack_factor=1.0)


@pytest.fixture(scope="module")
def surrogate():
    """A real Transolver network, tiny and untrained (seeded init): the optimiser only needs a
    differentiable Cd of the geometry."""
    from tasks.cfd.surrogate.features import FEATURES
    from tasks.cfd.surrogate.samples import Standardizer
    from tasks.cfd.surrogate.training import TrainConfig, TrainedSurrogate, predict_cd
    from tasks.cfd.surrogate.transolver import Transolver

    torch.manual_seed(0)
    config = TrainConfig(kind="transolver", d=16, blocks=1, heads=2, slices=4, steps=1, surface_points=32,
                         volume_points=48)
    standardizer = Standardizer(cd_mean=0.4, cd_std=0.05, profile_mean=np.zeros(32), profile_std=0.05, cp_mean=0.0,
                                cp_std=1.0, volume_mean=np.zeros(3), volume_std=np.ones(3))
    model = Transolver(FEATURES, config.d, config.blocks, config.heads, config.slices, config.profile_bins)
    trained = TrainedSurrogate(config, model.eval(), standardizer)
    return lambda *inputs: predict_cd(trained, *inputs)


def test_k1_identity_eot_equals_the_no_eot_objective(shape, surrogate):
    dP = project_controls(random_controls(shape, 1.0, 9), shape.lattice, SETTINGS.delta_max)
    fixed = identity(shape, SETTINGS)
    one = objective(surrogate, shape, dP, [fixed], SETTINGS.penalty)
    again = objective(surrogate, shape, dP, [fixed, fixed], SETTINGS.penalty)
    assert one.item() == again.item()
    eot = objective(surrogate, shape, dP, [sample_transformation(shape, SETTINGS, torch.Generator().manual_seed(1))],
                    SETTINGS.penalty)
    assert eot.item() != one.item()


@pytest.mark.parametrize("method", ["eot", "no_eot", "random"])
def test_every_method_returns_a_feasible_deterministic_result(shape, surrogate, method):
    settings = SETTINGS.model_copy(update={"method": method})
    result = optimise(surrogate, shape, settings)
    assert result.method == method and result.constraints_hold
    assert result.surrogate_calls == (3 if method == "no_eot" else 6)
    assert len(result.history) == result.surrogate_calls // (2 if method == "eot" else 1)
    assert 0 <= result.mean_displacement <= result.max_displacement <= settings.delta_max + 1e-12
    assert abs(result.area_ratio - 1) <= settings.volume_tolerance
    assert np.isfinite([result.predicted_force, result.predicted_force_base, result.predicted_reduction]).all()
    assert result.predicted_reduction == pytest.approx(1 - result.predicted_force / result.predicted_force_base)
    again = optimise(surrogate, shape, settings)
    assert np.array_equal(result.dP, again.dP) and result.history == again.history


def test_gradient_descent_lowers_the_objective_it_minimises(shape, surrogate):
    settings = SETTINGS.model_copy(update={"method": "no_eot", "steps": 15, "lr_fraction": 0.2})
    result = optimise(surrogate, shape, settings)
    assert min(result.history) < result.history[0]
    assert np.abs(result.dP).max() > 0


def test_verified_outcome_uses_the_base_reference_area_and_needs_both_conditions():
    from tasks.cfd.verification import verified_outcome

    # the shape got 10% lower: same force drop with the base A_ref, Cd with its own A_ref rises
    outcome = verified_outcome(cd_base=0.5, cd_opt=0.48, a_ref_ratio=0.9, constraints_hold=True)
    assert outcome["verified_reduction"] == pytest.approx(0.04)
    assert outcome["cd_opt_own_aref"] == pytest.approx(0.48 / 0.9) and outcome["verified_reduction_own_aref"] < 0
    assert outcome["success"]
    assert not verified_outcome(0.5, 0.48, 0.9, constraints_hold=False)["success"]
    assert not verified_outcome(0.5, 0.51, 1.0, constraints_hold=True)["success"]
    with pytest.raises(ValueError, match="cd_base"):
        verified_outcome(0.0, 0.5, 1.0, True)
