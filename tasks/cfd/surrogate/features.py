"""Per-point input features of the surrogates (spec §3.2; choices ours).

Coordinates are mapped by ONE fixed affine map of the vehicle frame (body units, nose at x = 0,
road at z = 0), never by a per-shape bounding box: a deformation must move the features, or the
surrogate cannot see it and the optimiser gets no gradient (§11). Every feature is a
differentiable function of the points, normals and contour.

Feature layout (FEATURES = 39): scaled (x, z) [2], sin/cos of 8 frequencies of each scaled
coordinate [32], outward normal (zeros for volume points) [2], distance to the surface [1],
one-hot {surface, volume} [2].
"""
from __future__ import annotations

import math

import torch

# Fixed frame: the volume box x in [-0.5, 2.5], z in [0, 1] (body units) maps to x' in [-1, 1],
# z' in [-1/3, 1/3]; the same map for every shape.
FRAME_CENTRE = (1.0, 0.5)
FRAME_HALF_WIDTH = 1.5
# Eight frequencies 1..32 (geometric) times pi: the finest wavelength, 2/32 of the scaled frame,
# is ~2 lattice cells at the default L = 24 (finer ones would encode sub-cell noise).
FREQUENCIES = math.pi * 2.0 ** torch.linspace(0, 5, 8, dtype=torch.float64)
FEATURES = 2 + 2 * 2 * len(FREQUENCIES) + 2 + 1 + 2


def frame(points: torch.Tensor) -> torch.Tensor:
    """Body-unit points [..., 2] in the fixed scaled frame."""
    centre = torch.tensor(FRAME_CENTRE, dtype=points.dtype, device=points.device)
    return (points - centre) / FRAME_HALF_WIDTH


def distance_to_surface(points: torch.Tensor, contour: torch.Tensor) -> torch.Tensor:
    """[B, N] distance (scaled frame) of points [B, N, 2] to the nearest of contour [B, K, 2] (body units)."""
    squared = (frame(points)[:, :, None, :] - frame(contour)[:, None, :, :]).pow(2).sum(-1)
    return squared.min(-1).values.clamp_min(1e-12).sqrt()  # clamp: finite gradient at zero distance


def point_features(points: torch.Tensor, normals: torch.Tensor | None, contour: torch.Tensor,
                   is_surface: bool) -> torch.Tensor:
    """Features [B, N, FEATURES] of points [B, N, 2] with outward normals [B, N, 2] (ignored and
    may be None for volume points) around the shapes of contour [B, K, 2] (dense, body units).
    Surface points get distance 0 and their normal; volume points zeros for the normal."""
    if points.dim() != 3 or points.shape[-1] != 2:
        raise ValueError(f"points: expected shape [B, N, 2], got {tuple(points.shape)}")
    if contour.dim() != 3 or contour.shape[0] != points.shape[0] or contour.shape[-1] != 2:
        raise ValueError(f"contour: expected shape [{points.shape[0]}, K, 2], got {tuple(contour.shape)}")
    scaled = frame(points)
    angles = scaled[..., None] * FREQUENCIES.to(points)  # [B, N, 2, 8]
    fourier = torch.cat([angles.sin(), angles.cos()], -1).flatten(-2)
    zeros = points.new_zeros(points.shape[:-1] + (1,))
    if is_surface:
        if normals is None or normals.shape != points.shape:
            raise ValueError(f"normals: surface points need normals of shape {tuple(points.shape)}, got "
                             f"{None if normals is None else tuple(normals.shape)}")
        normal, distance, flag = normals, zeros, torch.cat([zeros + 1, zeros], -1)
    else:
        normal = points.new_zeros(points.shape)
        distance, flag = distance_to_surface(points, contour)[..., None], torch.cat([zeros, zeros + 1], -1)
    return torch.cat([scaled, fourier, normal, distance, flag], -1)
