"""Spec §10.1-10.3: the tangent property, the push direction and target, the push loss's gradient."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from flows.ddsvm.push import (linear_surrogate_loss, push_direction, push_loss, pushed_target, tangent_project,
                              unit_normals)

D, C, B = 64, 10, 32


def svm_and_batch(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    W, b = torch.randn(C, D, generator=g, dtype=torch.float64), 0.1 * torch.randn(C, generator=g, dtype=torch.float64)
    z = torch.randn(B, D, generator=g, dtype=torch.float64)
    return W, b, z, torch.randint(0, C, (B,), generator=g)


@pytest.mark.parametrize("option", ["A", "B", "C"])
def test_gradient_through_the_normalisation_is_tangent(option):
    """|z . dg/dz| <= 1e-5 |z| |dg/dz| for any loss of u = z / |z|, L_push included."""
    W, b, z, y = svm_and_batch()
    z.requires_grad_(True)
    losses = {"push": lambda u: push_loss(u, y, W, b, 0.1, option), "any": lambda u: (u ** 3).sum() + u[:, 0].exp().sum()}
    for loss in losses.values():
        (grad,) = torch.autograd.grad(loss(F.normalize(z, dim=1)), z)
        radial = (z * grad).sum(1).abs()
        assert (radial <= 1e-5 * z.norm(dim=1) * grad.norm(dim=1) + 1e-300).all()


def test_option_a_rotates_u_toward_its_own_normal():
    """d_perp is tangent, u+ is a unit vector rotated toward w^_y by atan(eta sin phi); the margin never drops."""
    W, b, z, y = svm_and_batch(1)
    u = F.normalize(z, dim=1)
    normals = unit_normals(W)[y]
    d_perp = tangent_project(u, push_direction(u, y, W, b, "A"))
    assert (u * d_perp).sum(1).abs().max() < 1e-6
    cos_phi = (u * normals).sum(1)
    sin_phi = (1 - cos_phi ** 2).sqrt()
    torch.testing.assert_close(d_perp.norm(dim=1), sin_phi)
    for eta in (1e-3, 0.1, 0.5, 1.0):
        target = pushed_target(u, d_perp, eta)
        torch.testing.assert_close(target.norm(dim=1), torch.ones(B, dtype=torch.float64))
        rotated = torch.acos(cos_phi.clamp(-1, 1)) - torch.acos((target * normals).sum(1).clamp(-1, 1))
        torch.testing.assert_close(rotated, torch.atan(eta * sin_phi))
        gain = (target * normals).sum(1) - cos_phi
        assert (gain > 0).all()
        if eta == 1e-3:
            torch.testing.assert_close(gain, eta * sin_phi ** 2, rtol=1e-2, atol=1e-9)


def test_push_loss_gradient_is_the_linear_surrogates():
    """For eta = 1e-4 the gradients of L_push and L_lin with respect to z point the same way (cosine > 0.999)."""
    W, b, z, y = svm_and_batch(2)
    z.requires_grad_(True)
    (push,) = torch.autograd.grad(push_loss(F.normalize(z, dim=1), y, W, b, 1e-4), z)
    (lin,) = torch.autograd.grad(linear_surrogate_loss(F.normalize(z, dim=1), y, W), z)
    assert F.cosine_similarity(push.flatten(), lin.flatten(), dim=0) > 0.999
    torch.testing.assert_close(push, 2 * lin, rtol=1e-3, atol=1e-9)  # "up to the factor 2"


def test_directions_of_the_ablations():
    W, b, z, y = svm_and_batch(3)
    u = F.normalize(z, dim=1)
    normals, scores = unit_normals(W), u @ W.T + b
    rival = scores.clone()
    rival[torch.arange(B), y] = -math.inf
    torch.testing.assert_close(push_direction(u, y, W, b, "B"), normals[y] - normals[rival.argmax(1)])
    signs = torch.where(torch.arange(C)[None] == y[:, None], 1.0, -1.0).double()
    active = (signs * scores < 1).double()
    torch.testing.assert_close(push_direction(u, y, W, b, "C"), (signs * active) @ normals)
    masked = push_direction(u, y, W, b, "A", only_violators=True)
    beyond = scores[torch.arange(B), y] >= 1
    assert (masked[beyond] == 0).all() and torch.equal(masked[~beyond], normals[y][~beyond])
    with pytest.raises(ValueError, match="option"):
        push_direction(u, y, W, b, "D")


def test_target_is_detached():
    W, b, z, y = svm_and_batch(4)
    u = F.normalize(z.requires_grad_(True), dim=1)
    loss = push_loss(u, y, W, b, 0.1)
    assert loss.item() > 0
    (grad,) = torch.autograd.grad(loss, z)
    assert grad.abs().sum() > 0
