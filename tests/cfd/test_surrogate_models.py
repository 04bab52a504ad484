"""Surrogate building blocks, spec §10 Surrogate: features see deformations, slice weights are
distributions, the baselines are invariant to permutations of surface and of volume points and their
profile is the cumulative sum of its contributions. A paper's own network reuses the checks (check_*)."""
from __future__ import annotations

import pytest
import torch

from tasks.cfd.surrogate.features import FEATURES, distance_to_surface, point_features
from tasks.cfd.surrogate.heads import binned_profile
from tasks.cfd.surrogate.pointnet import PointNet
from tasks.cfd.surrogate.transolver import PhysicsAttention, Transolver
from tasks.cfd.vehicles import sample_family


def shape_tensors(ns=24, nv=40, seed=0):
    """One real vehicle's surface points/normals, dense contour and volume points outside it."""
    vehicle = sample_family(1, seed=seed)[0]
    points, normals = vehicle.contour(ns)
    contour, _ = vehicle.contour(200)
    generator = torch.Generator().manual_seed(seed)
    volume = torch.rand(4 * nv, 2, generator=generator, dtype=torch.float64) * torch.tensor([3.0, 1.0]) \
        + torch.tensor([-0.5, 0.0])
    volume = volume[torch.as_tensor(~vehicle.inside(volume.numpy()))][:nv]
    return torch.as_tensor(points), torch.as_tensor(normals), volume, torch.as_tensor(contour)


def features_of(points, normals, volume, contour):
    return (point_features(points[None], normals[None], contour[None], is_surface=True).float(),
            point_features(volume[None], None, contour[None], is_surface=False).float(),
            points[None, :, 0].float())


def test_features_layout_distance_and_flags():
    points, normals, volume, contour = shape_tensors()
    surface, volume_feats, _ = features_of(points, normals, volume, contour)
    assert surface.shape == (1, 24, FEATURES) and volume_feats.shape == (1, 40, FEATURES)
    assert (surface[..., -3] == 0).all() and (surface[..., -2:] == torch.tensor([1.0, 0.0])).all()
    assert (volume_feats[..., -2:] == torch.tensor([0.0, 1.0])).all() and (volume_feats[..., -5:-3] == 0).all()
    brute = torch.stack([torch.linalg.norm(contour - p, dim=1).min() for p in volume]) / 1.5  # frame scale 1.5 L
    torch.testing.assert_close(distance_to_surface(volume[None], contour[None])[0], brute)
    with pytest.raises(ValueError, match="normals"):
        point_features(points[None], None, contour[None], is_surface=True)


def test_features_move_with_the_shape_and_have_gradients():
    points, normals, volume, contour = shape_tensors()
    base = features_of(points, normals, volume, contour)
    centre = points.mean(0)
    scaled = [centre + 1.01 * (t - centre) for t in (points, volume, contour)]  # a per-shape bbox would hide this
    moved = features_of(scaled[0], normals, scaled[1], scaled[2])
    assert (moved[0] - base[0]).abs().max() > 1e-3 and (moved[1] - base[1]).abs().max() > 1e-3
    shifted = features_of(points + torch.tensor([0.004, 0.0]), normals, volume, contour)
    assert (shifted[0] - base[0]).abs().max() > 1e-3
    points, volume, contour = (t.clone().requires_grad_() for t in (points, volume, contour))
    sum(f.sum() for f in features_of(points, normals, volume, contour)[:2]).backward()
    for t in (points, volume, contour):
        assert torch.isfinite(t.grad).all() and t.grad.abs().sum() > 0


def check_slice_weights_are_distributions(attention, training: bool) -> None:
    torch.manual_seed(0)
    layer = attention(16, 2, 5).train(training)
    layer(torch.randn(3, 30, 16))
    assert layer.last_weights.shape == (3, 2, 30, 5) and (layer.last_weights >= 0).all()
    torch.testing.assert_close(layer.last_weights.sum(-1), torch.ones(3, 2, 30))


@pytest.mark.parametrize("training", [True, False])
def test_slice_weights_sum_to_one_for_every_token(training):
    check_slice_weights_are_distributions(PhysicsAttention, training)


def check_permutation_invariance_and_profile(model) -> None:
    """Outputs of a model with 8 profile bins on one real shape: pooled outputs invariant to permuting
    surface and volume points, per-point outputs permuted with them, the profile's end the sum of the
    contributions."""
    model.eval()
    surface, volume, x = features_of(*shape_tensors())
    out = model(surface, volume, x)
    assert out["cd"].shape == (1,) and out["profile"].shape == (1, 8)
    assert out["surface_cp"].shape == (1, 24) and out["volume"].shape == (1, 40, 3)
    torch.testing.assert_close(out["profile"][:, -1], out["contributions"].sum(1))
    ps, pv = torch.randperm(24), torch.randperm(40)
    permuted = model(surface[:, ps], volume[:, pv], x[:, ps])
    for key in ("cd", "profile"):
        torch.testing.assert_close(permuted[key], out[key], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(permuted["surface_cp"], out["surface_cp"][:, ps], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(permuted["volume"], out["volume"][:, pv], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("network", [lambda: Transolver(FEATURES, d=16, blocks=2, heads=2, slices=4, bins=8),
                                     lambda: PointNet(FEATURES, d=16, bins=8)], ids=["transolver", "pointnet"])
def test_outputs_are_invariant_to_point_permutations_and_profile_sums_contributions(network):
    torch.manual_seed(0)
    check_permutation_invariance_and_profile(network())


def test_binned_profile_bins_by_x_and_accumulates():
    contributions = torch.tensor([[1.0, 2.0, 4.0, 8.0, 16.0]])
    x = torch.tensor([[0.0, 0.3, 0.26, 0.99, 1.2]])  # bins (K = 4): 0, 1, 1, 3, 3 (clamped)
    torch.testing.assert_close(binned_profile(contributions, x, 4), torch.tensor([[1.0, 7.0, 7.0, 31.0]]))
