"""A user's point cloud or mesh as an [n, 3] array, refusing anything unusable with one line naming it.

Formats: .npy (an [n, 3] numeric array; no pickles), .xyz / .txt (x y z per line, space or comma separated,
extra columns ignored, '#' comments), .ply (a point cloud, or a mesh whose surface is sampled), .stl / .obj
(meshes: `sample` points drawn on the surface with trimesh, seeded). Sizes are checked before allocating:
the file (tasks.core.inputs.MAX_INPUT_BYTES), the point count (MAX_POINTS); non-finite coordinates are refused.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError, check_count, check_readable, read_text

MAX_POINTS = 5_000_000
MAX_SAMPLE = 100_000
TEXT = (".xyz", ".txt")
MESHES = (".stl", ".obj")
FORMATS = (".npy", ".ply", *TEXT, *MESHES)


def read_npy(path: Path) -> np.ndarray:
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)  # the header first: shape before any allocation
    except (ValueError, OSError, EOFError) as error:
        raise InputError(f"CLOUD {path}: not a readable .npy array ({str(error).splitlines()[0][:120]})") from None
    if array.ndim != 2 or array.shape[1] != 3:
        raise InputError(f"CLOUD {path}: expected an [n, 3] array, got shape {tuple(array.shape)}")
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
        raise InputError(f"CLOUD {path}: expected real numbers, got dtype {array.dtype}")
    check_count(f"CLOUD {path}: point count", array.shape[0], MAX_POINTS)
    return np.asarray(array, dtype=float)


def read_xyz(path: Path) -> np.ndarray:
    rows = []
    for number, line in enumerate(read_text(path, "CLOUD").splitlines(), start=1):
        fields = line.split("#", 1)[0].replace(",", " ").split()
        if not fields:
            continue
        if len(fields) < 3:
            raise InputError(f"CLOUD {path} line {number}: expected x y z, got {line.strip()[:80]!r}")
        try:
            rows.append([float(value) for value in fields[:3]])
        except ValueError:
            raise InputError(f"CLOUD {path} line {number}: not a number in {line.strip()[:80]!r}") from None
        check_count(f"CLOUD {path}: point count", len(rows), MAX_POINTS)
    return np.array(rows, dtype=float).reshape(-1, 3)


def read_trimesh(path: Path, sample: int, seed: int) -> np.ndarray:
    import trimesh

    try:
        loaded = trimesh.load(str(path), file_type=path.suffix.lower().lstrip("."))
    except Exception as error:  # trimesh raises many kinds on a broken file: all are the user's input
        raise InputError(f"CLOUD {path}: not a readable {path.suffix.lower()} file ({type(error).__name__})") from None
    if isinstance(loaded, trimesh.Scene):
        geometries = list(loaded.geometry.values())
        if not geometries:
            raise InputError(f"CLOUD {path}: the file holds no geometry")
        loaded = trimesh.util.concatenate(geometries) if len(geometries) > 1 else geometries[0]
    if isinstance(loaded, trimesh.Trimesh) and len(loaded.faces) > 0:
        if not np.isfinite(loaded.vertices).all():
            raise InputError(f"CLOUD {path}: non-finite vertex coordinates")
        if not loaded.area > 0:
            raise InputError(f"CLOUD {path}: the mesh has zero surface area")
        points, _ = trimesh.sample.sample_surface(loaded, sample, seed=seed)
        return np.asarray(points, dtype=float)
    vertices = np.asarray(getattr(loaded, "vertices", np.empty((0, 3))), dtype=float)
    check_count(f"CLOUD {path}: point count", len(vertices), MAX_POINTS)
    return vertices.reshape(-1, 3)


def read_cloud(path: Path, sample: int = 1024, seed: int = 0) -> np.ndarray:
    """The points of the file at `path` ([n, 3], n >= 1, finite); meshes sampled with `sample` points."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"CLOUD {path}: unknown format {path.suffix or '(none)'!r}; expected one of {', '.join(FORMATS)}")
    if not 1 <= sample <= MAX_SAMPLE:
        raise InputError(f"--sample: must be in 1..{MAX_SAMPLE:,}, got {sample}")
    check_readable(path, "CLOUD")
    if suffix == ".npy":
        points = read_npy(path)
    elif suffix in TEXT:
        points = read_xyz(path)
    else:
        points = read_trimesh(path, sample, seed)
    if len(points) == 0:
        raise InputError(f"CLOUD {path}: no points")
    if not np.isfinite(points).all():
        bad = int(np.argwhere(~np.isfinite(points))[0, 0])
        raise InputError(f"CLOUD {path}: point {bad} is not finite ({points[bad].tolist()})")
    return points
