"""Point clouds sampled from the surfaces of trimesh primitives with random parameters: a classification task
whose class is the shape (no downloads; trimesh builds these with numpy only).

Each cloud: n surface points (trimesh.sample.sample_surface), a random rotation about z, centred on its
centroid and scaled to max norm 1, so neither size nor position gives the class away.
"""
from __future__ import annotations

import numpy as np
import trimesh

from tasks.core.seeding import derive_seed

CLASSES = ("box", "icosphere", "cylinder", "cone", "torus", "capsule", "annulus")


def primitive(name: str, rng: np.random.Generator) -> trimesh.Trimesh:
    """One mesh of class `name` with the random parameters of its family."""
    u = rng.uniform
    if name == "box":
        return trimesh.creation.box(extents=u(0.4, 1.0, size=3))
    if name == "icosphere":
        return trimesh.creation.icosphere(subdivisions=2)
    if name == "cylinder":
        return trimesh.creation.cylinder(radius=u(0.3, 0.6), height=u(0.6, 1.4))
    if name == "cone":
        return trimesh.creation.cone(radius=u(0.3, 0.7), height=u(0.6, 1.4))
    if name == "torus":
        return trimesh.creation.torus(major_radius=u(0.5, 0.8), minor_radius=u(0.1, 0.3))
    if name == "capsule":
        return trimesh.creation.capsule(height=u(0.4, 1.2), radius=u(0.2, 0.5))
    if name == "annulus":
        r_min = u(0.2, 0.4)
        return trimesh.creation.annulus(r_min=r_min, r_max=r_min + u(0.2, 0.4), height=u(0.2, 0.8))
    raise ValueError(f"class: must be one of {CLASSES}, got {name!r}")


def normalise(points: np.ndarray) -> np.ndarray:
    """Centred on the centroid, scaled to max norm 1 ([n, d]; a degenerate single point stays at 0)."""
    centred = points - points.mean(axis=0)
    scale = np.linalg.norm(centred, axis=1).max()
    return centred / scale if scale > 0 else centred


def rotation_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def sample_cloud(mesh: trimesh.Trimesh, n: int, seed: int) -> np.ndarray:
    points, _ = trimesh.sample.sample_surface(mesh, n, seed=seed)
    return np.asarray(points, dtype=float)


def primitive_clouds(classes: tuple[str, ...], per_class: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """X [len(classes) * per_class, n, 3] float32 and labels y (index into `classes`); cloud k of class c is a
    function of (seed, c, k) alone."""
    X = np.empty((len(classes) * per_class, n, 3), dtype=np.float32)
    y = np.repeat(np.arange(len(classes)), per_class)
    for c, name in enumerate(classes):
        for k in range(per_class):
            rng = np.random.default_rng(derive_seed(seed, name, k))
            points = sample_cloud(primitive(name, rng), n, int(rng.integers(2**31)))
            X[c * per_class + k] = normalise(points @ rotation_z(rng.uniform(0, 2 * np.pi)).T)
    return X, y
