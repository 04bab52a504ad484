"""A generated image-classification set: orthographic depth images of trimesh primitives seen from random
viewpoints (no downloads; trimesh builds the meshes with numpy only, a z-buffer in numpy renders them).

Each image: a primitive of its class with random family parameters, stretched along its own axes by a small
random anisotropic scale, turned by a rotation drawn uniformly on SO(3), centred on its bounding box and scaled to
fit the unit ball, so neither size nor position gives the class away. The camera looks down the z axis at the
square [-1, 1]^2; a pixel holds the nearness (1 + z) / 2 in [0, 1] of the first surface its ray meets, 0 where it
meets none.
"""
from __future__ import annotations

import numpy as np
import trimesh

from tasks.core.seeding import derive_seed

# distinct solids, some pairs alike on purpose (cylinder and hexagonal prism, cone and pyramid, sphere and capsule)
CLASSES = ("box", "sphere", "cylinder", "cone", "capsule", "torus", "pyramid", "hex_prism", "ell", "dumbbell")
SIZE = 32
STRETCH = 0.2  # each axis scaled by a factor in [1 - STRETCH, 1 + STRETCH] before the rotation
SECTIONS = 24  # facets around a round solid: smooth at 32x32, few faces to render
FLAT = 1e-12  # triangles seen edge-on (a projected area below this) cover no pixel centre


def _ell(rng: np.random.Generator) -> trimesh.Trimesh:
    """Two boxes of one thickness meeting at a right angle (an L)."""
    t, a, b = rng.uniform(0.2, 0.35), rng.uniform(0.7, 1.2), rng.uniform(0.5, 1.0)
    first = trimesh.creation.box(extents=(a, t, t))
    second = trimesh.creation.box(extents=(t, b, t))
    second.apply_translation(((t - a) / 2, (b + t) / 2, 0.0))
    return trimesh.util.concatenate([first, second])


def _dumbbell(rng: np.random.Generator) -> trimesh.Trimesh:
    """Two balls joined by a thin bar along z."""
    radius, gap = rng.uniform(0.25, 0.4), rng.uniform(0.4, 0.9)
    ends = [trimesh.creation.icosphere(subdivisions=1, radius=radius) for _ in range(2)]
    ends[0].apply_translation((0.0, 0.0, -(gap / 2 + radius)))
    ends[1].apply_translation((0.0, 0.0, gap / 2 + radius))
    bar = trimesh.creation.cylinder(radius=radius * rng.uniform(0.25, 0.45), height=gap + radius, sections=12)
    return trimesh.util.concatenate([*ends, bar])


def primitive(name: str, rng: np.random.Generator) -> trimesh.Trimesh:
    """One mesh of class `name` with the random parameters of its family (before stretch, rotation, scaling)."""
    u = rng.uniform
    if name == "box":
        return trimesh.creation.box(extents=u(0.4, 1.0, size=3))
    if name == "sphere":
        return trimesh.creation.icosphere(subdivisions=2)
    if name == "cylinder":
        return trimesh.creation.cylinder(radius=u(0.3, 0.6), height=u(0.6, 1.4), sections=SECTIONS)
    if name == "cone":
        return trimesh.creation.cone(radius=u(0.3, 0.7), height=u(0.6, 1.4), sections=SECTIONS)
    if name == "capsule":
        return trimesh.creation.capsule(height=u(0.4, 1.2), radius=u(0.2, 0.5), count=[8, 16])
    if name == "torus":
        return trimesh.creation.torus(major_radius=u(0.5, 0.8), minor_radius=u(0.12, 0.3),
                                      major_sections=SECTIONS, minor_sections=10)
    if name == "pyramid":
        return trimesh.creation.cone(radius=u(0.4, 0.8), height=u(0.6, 1.4), sections=4)
    if name == "hex_prism":
        return trimesh.creation.cylinder(radius=u(0.3, 0.6), height=u(0.6, 1.4), sections=6)
    if name == "ell":
        return _ell(rng)
    if name == "dumbbell":
        return _dumbbell(rng)
    raise ValueError(f"class: must be one of {CLASSES}, got {name!r}")


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A 3x3 rotation uniform on SO(3): the unit quaternion of a standard normal 4-vector (uniform on S^3)."""
    w, x, y, z = (q := rng.normal(size=4)) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def posed_vertices(vertices: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Stretched along the mesh's own axes, rotated, centred on the bounding box and scaled into the unit ball."""
    turned = (vertices * rng.uniform(1 - STRETCH, 1 + STRETCH, size=3)) @ random_rotation(rng).T
    centred = turned - (turned.min(axis=0) + turned.max(axis=0)) / 2
    return centred / np.linalg.norm(centred, axis=1).max()


def pixel_centres(size: int) -> tuple[np.ndarray, np.ndarray]:
    """x and y of the pixel centres of a size x size image of [-1, 1]^2, row-major, row 0 at the top (y = 1)."""
    ticks = -1 + (np.arange(size) + 0.5) * 2 / size
    y, x = np.meshgrid(-ticks, ticks, indexing="ij")
    return x.ravel(), y.ravel()


def depth_image(vertices: np.ndarray, faces: np.ndarray, size: int = SIZE) -> np.ndarray:
    """Orthographic depth image [size, size] float32 of a mesh inside the unit ball seen from z = +inf: per pixel
    the nearness (1 + z) / 2 of the highest surface point over its centre, 0 where no triangle covers it. A z-buffer
    over every (pixel, triangle) pair: the barycentric coordinates of the pixel centre in the triangle's projection
    decide coverage and interpolate z (the ray cast of a parallel camera, vectorised)."""
    px, py = (c[:, None] for c in pixel_centres(size))
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    ab, ac = b - a, c - a
    area = ab[:, 0] * ac[:, 1] - ac[:, 0] * ab[:, 1]  # twice the signed projected area
    seen = np.abs(area) > FLAT
    a, ab, ac, area = a[seen], ab[seen], ac[seen], area[seen]
    dx, dy = px - a[:, 0], py - a[:, 1]  # [pixels, faces]
    w1 = (dx * ac[:, 1] - ac[:, 0] * dy) / area
    w2 = (ab[:, 0] * dy - dx * ab[:, 1]) / area
    covered = (w1 >= 0) & (w2 >= 0) & (w1 + w2 <= 1)
    z = np.where(covered, a[:, 2] + w1 * ab[:, 2] + w2 * ac[:, 2], -np.inf).max(axis=1, initial=-np.inf)
    return np.where(np.isfinite(z), (1 + z) / 2, 0.0).reshape(size, size).astype(np.float32)


def render(name: str, seed: int, size: int = SIZE) -> np.ndarray:
    """One depth image of class `name`, a function of (name, seed) alone."""
    rng = np.random.default_rng(seed)
    mesh = primitive(name, rng)
    return depth_image(posed_vertices(np.asarray(mesh.vertices, dtype=float), rng), np.asarray(mesh.faces), size)


def depth_images(per_class: int, seed: int, size: int = SIZE,
                 classes: tuple[str, ...] = CLASSES) -> tuple[np.ndarray, np.ndarray]:
    """Images [len(classes) * per_class, 1, size, size] float32 in [0, 1] and labels int64 (indices into
    `classes`), class by class; image i of class c is a function of (seed, c, i) alone, so a larger set extends a
    smaller one."""
    x = np.stack([render(name, derive_seed(seed, name, i), size) for name in classes for i in range(per_class)])
    return x[:, None], np.repeat(np.arange(len(classes), dtype=np.int64), per_class)
