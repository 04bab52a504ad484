"""The generated depth images: the z-buffer against closed forms (a sphere's profile, a cube's flat face, the nearer
of two overlapping triangles), uniform rotations, determinism to the byte, shapes and value range, classes apart."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from tasks.train.depth_images import (CLASSES, SIZE, depth_image, depth_images, pixel_centres, posed_vertices,
                                      primitive, random_rotation)


def test_a_sphere_renders_its_closed_form_profile():
    """The unit sphere from above: nearness (1 + sqrt(1 - x^2 - y^2)) / 2 inside the unit disc, 0 outside (a fine
    icosphere's facets lie within 0.3 % of the radius)."""
    sphere = trimesh.creation.icosphere(subdivisions=4)
    image = depth_image(np.asarray(sphere.vertices), np.asarray(sphere.faces)).ravel()
    x, y = pixel_centres(SIZE)
    r = np.hypot(x, y)
    inside, outside = r < 0.95, r > 1.0
    closed = (1 + np.sqrt(1 - r[inside] ** 2)) / 2
    assert np.abs(image[inside] - closed).max() < 0.005
    assert (image[outside] == 0).all() and inside.sum() > 700


def test_a_cube_shows_its_top_face_flat_and_the_nearer_triangle_wins():
    cube = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    image = depth_image(np.asarray(cube.vertices), np.asarray(cube.faces)).ravel()
    x, y = pixel_centres(SIZE)
    square = (np.abs(x) < 0.5) & (np.abs(y) < 0.5)
    np.testing.assert_allclose(image[square], 0.75, atol=1e-6)  # the top face z = 0.5, not the bottom one
    assert (image[~square] == 0).all()
    low, high = np.array([[-1, -1, -0.5], [1, -1, -0.5], [0, 1, -0.5]]), np.array([[-1, -1, 0.2], [1, -1, 0.2], [0, 1, 0.2]])
    for first, second in ((low, high), (high, low)):  # the nearer surface whatever the order of the faces
        image = depth_image(np.vstack([first, second]), np.array([[0, 1, 2], [3, 4, 5]]))
        assert image.max() == pytest.approx(0.6) and set(np.unique(image)) == {0.0, np.float32(0.6)}


def test_rotations_are_proper_and_uniform():
    rng = np.random.default_rng(0)
    rotations = np.stack([random_rotation(rng) for _ in range(4000)])
    np.testing.assert_allclose(rotations @ rotations.transpose(0, 2, 1), np.broadcast_to(np.eye(3), rotations.shape),
                               atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0, atol=1e-12)
    # Haar measure: every entry has mean 0 and variance 1/3 (each column is uniform on the sphere)
    assert np.abs(rotations.mean(axis=0)).max() < 0.05
    np.testing.assert_allclose((rotations ** 2).mean(axis=0), 1 / 3, atol=0.03)


def test_posed_meshes_fill_the_unit_ball_centred():
    rng = np.random.default_rng(1)
    for name in CLASSES:
        posed = posed_vertices(np.asarray(primitive(name, rng).vertices, dtype=float), rng)
        assert np.linalg.norm(posed, axis=1).max() == pytest.approx(1.0)
        np.testing.assert_allclose(posed.min(axis=0) + posed.max(axis=0), 0.0, atol=1e-12)


def test_same_seed_same_bytes_and_a_larger_set_extends_a_smaller_one():
    x, y = depth_images(3, seed=7)
    again, _ = depth_images(3, seed=7)
    assert x.tobytes() == again.tobytes()
    smaller, _ = depth_images(2, seed=7)
    np.testing.assert_array_equal(smaller, x.reshape(len(CLASSES), 3, 1, SIZE, SIZE)[:, :2].reshape(-1, 1, SIZE, SIZE))
    other, _ = depth_images(3, seed=8)
    assert not np.array_equal(x, other)
    assert x.shape == (3 * len(CLASSES), 1, SIZE, SIZE) and x.dtype == np.float32 and y.dtype == np.int64
    np.testing.assert_array_equal(y, np.repeat(np.arange(len(CLASSES)), 3))
    assert x.min() == 0.0 and x.max() <= 1.0
    covered = (x > 0).mean(axis=(1, 2, 3))
    assert (covered > 0.05).all() and (covered < 0.8).all()  # an object in every image, background around (disc: 0.785)


def test_the_classes_look_different():
    """Each class's mean image is nearer its own images than any other class's mean is (on held-out draws)."""
    per_class = 12
    x, y = depth_images(per_class, seed=3)
    flat = x.reshape(len(x), -1)
    means = np.stack([flat[(y == c) & (np.arange(len(y)) % per_class < per_class // 2)].mean(0) for c in range(len(CLASSES))])
    gaps = np.linalg.norm(means[:, None] - means[None], axis=2)
    assert gaps[~np.eye(len(CLASSES), dtype=bool)].min() > 0.5
    held_out = np.arange(len(y)) % per_class >= per_class // 2
    nearest = np.linalg.norm(flat[held_out, None] - means[None], axis=2).argmin(1)
    assert (nearest == y[held_out]).mean() > 0.3  # well above chance (0.1)


def test_an_unknown_class_is_refused():
    with pytest.raises(ValueError, match="class: must be one of"):
        primitive("teapot", np.random.default_rng(0))
