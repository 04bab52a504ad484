"""A user's 3D vehicle mesh in UniDrag's frame, its side silhouette for the 2D surrogate, and the
2D FFD applied back to the 3D mesh.

Frame rule (ours): the mesh is read as given with +x streamwise, y lateral and z up (no axis
guessing). It is scaled uniformly so that its x-extent is 1 (L = 1), moved so that the nose is at
x = 0 and the y-centre of its bounding box at y = 0. The road: when the mesh lies on or above its
own z = 0 plane, that plane is the road (z scaled with the rest); otherwise the lowest point is
put at MEDIAN_CLEARANCE, the median ground clearance of the data set's generator (g ~ U[0.035, 0.06]).
Silhouette: the section by the plane y = 0 (the y-centre); its largest closed loop, ordered
counter-clockwise in (x, z) and resampled equally in arc length.

A mesh file is checked before trimesh builds anything from it: its size (MAX_MESH_BYTES), a binary
STL's declared triangle count (MAX_FACES), then the raw triangles (count, finite coordinates of at
most MAX_COORDINATE in magnitude) before trimesh processes them. MeshError is an InputError.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import trimesh

from tasks.core.inputs import InputError, check_readable

from .constraints import polygon_area
from .ffd import ControlLattice, weight_matrix
from .vehicles import resample_closed

MEDIAN_CLEARANCE = 0.0475  # median of U[0.035, 0.06] (spec §3.1), units of L
MAX_MESH_BYTES = 128 * 2**20
MAX_FACES = 1_000_000  # a vehicle's silhouette needs far fewer; decimate a scan first
MAX_COORDINATE = 1e9  # |x|, |y|, |z| in the file's units
_STL_HEADER = 84  # binary STL: 80-byte header, uint32 triangle count, then 50 bytes per triangle


class MeshError(InputError):
    """A mesh file that cannot be used: the message names the file and the fault."""


@dataclass(frozen=True)
class UserShape:
    """mesh: the mesh in the vehicle frame; contour [n, 2] counter-clockwise silhouette (x, z);
    scale and offset map the original coordinates: frame = scale * original + offset;
    road_rule: which frame rule placed the road."""

    mesh: trimesh.Trimesh
    contour: np.ndarray
    scale: float
    offset: np.ndarray
    road_rule: str

    @property
    def a_ref(self) -> float:
        """Frontal height of the silhouette (2D reference area per unit span)."""
        return float(self.contour[:, 1].max() - self.contour[:, 1].min())

    def to_original(self, vertices: np.ndarray) -> np.ndarray:
        return (np.asarray(vertices) - self.offset) / self.scale


def _binary_stl_faces(path: Path) -> int | None:
    """The triangle count a binary STL declares, when the file is one (its size matches the count)."""
    size = path.stat().st_size
    if path.suffix.lower() != ".stl" or size < _STL_HEADER:
        return None
    with path.open("rb") as handle:
        count = int(np.frombuffer(handle.read(_STL_HEADER)[80:], dtype="<u4")[0])
    return count if size == _STL_HEADER + 50 * count else None


def load_mesh(path: Path) -> trimesh.Trimesh:
    """The mesh of an STL/OBJ/PLY file; MeshError when missing, oversized, empty, not finite, not
    watertight or degenerate."""
    path = Path(path)
    if not path.is_file():
        raise MeshError(f"{path}: no such file")
    check_readable(path, "mesh", MAX_MESH_BYTES)
    declared = _binary_stl_faces(path)
    if declared is not None and declared > MAX_FACES:
        raise MeshError(f"{path}: {declared:,} triangles is over the limit of {MAX_FACES:,} (decimate the mesh first)")
    try:
        mesh = trimesh.load(path, force="mesh", process=False)
    except Exception as error:  # noqa: BLE001 - trimesh raises many types for unreadable files
        detail = (str(error).strip().splitlines() or [""])[0][:160]
        raise MeshError(f"{path}: cannot be read as a mesh ({type(error).__name__}: {detail})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) < 4:
        raise MeshError(f"{path}: holds no surface mesh (need at least 4 triangles)")
    if len(mesh.faces) > MAX_FACES:
        raise MeshError(f"{path}: {len(mesh.faces):,} triangles is over the limit of {MAX_FACES:,} "
                        "(decimate the mesh first)")
    faces = np.asarray(mesh.faces)
    if faces.min() < 0 or faces.max() >= len(mesh.vertices):
        raise MeshError(f"{path}: a triangle refers to a vertex the file does not have")
    used = np.asarray(mesh.vertices)[np.unique(faces)]
    if not np.isfinite(used).all():
        raise MeshError(f"{path}: a vertex has a non-finite coordinate (NaN or infinity)")
    if np.abs(used).max() > MAX_COORDINATE:
        raise MeshError(f"{path}: a vertex coordinate of {np.abs(used).max():.3g} is over the limit of |x|, |y|, |z| <= "
                        f"{MAX_COORDINATE:g} (rescale the mesh)")
    mesh.process()  # what trimesh.load(process=True) does: merge duplicate vertices
    if not mesh.is_watertight:
        _, uses = np.unique(mesh.edges_sorted, axis=0, return_counts=True)
        raise MeshError(f"{path}: the mesh is not watertight ({int((uses != 2).sum())} edges are not shared by exactly "
                        "two triangles); the solver needs a closed surface (fill the holes, e.g. with "
                        "trimesh.repair.fill_holes, and try again)")
    extent = mesh.extents
    if extent.min() <= 1e-9 * extent.max() or abs(mesh.volume) <= 1e-12 * extent.prod():
        raise MeshError(f"{path}: the mesh is degenerate (extents {extent.tolist()}, volume {mesh.volume:.3g})")
    return mesh


def to_vehicle_frame(mesh: trimesh.Trimesh) -> tuple[trimesh.Trimesh, float, np.ndarray, str]:
    """(mesh in the frame, scale, offset, road rule) by the module's frame rule."""
    low, high = mesh.bounds
    scale = 1.0 / (high[0] - low[0])
    if low[2] >= 0:
        z_offset, rule = 0.0, "mesh z = 0 plane"
    else:
        z_offset, rule = MEDIAN_CLEARANCE - scale * low[2], f"lowest point at {MEDIAN_CLEARANCE} L"
    offset = np.array([-scale * low[0], -scale * (low[1] + high[1]) / 2, z_offset])
    framed = mesh.copy()
    framed.apply_transform(np.diag([scale, scale, scale, 1.0]))
    framed.apply_translation(offset)
    if framed.volume < 0:  # inward-facing triangles: flip, so volumes and normals are outward
        framed.invert()
    return framed, scale, offset, rule


def silhouette(mesh: trimesh.Trimesh, points: int) -> np.ndarray:
    """The counter-clockwise (x, z) contour [points, 2] of the mesh's section at y = 0."""
    section = mesh.section(plane_origin=[0.0, 0.0, 0.0], plane_normal=[0.0, 1.0, 0.0])
    if section is None:
        raise MeshError("the mesh has no section at its y-centre (is y the lateral axis?)")
    loops = [loop[:, [0, 2]] for loop in section.discrete if len(loop) >= 4]
    if not loops:
        raise MeshError("the mid-plane section has no closed loop")
    areas = [float(polygon_area(torch.as_tensor(loop))) for loop in loops]
    loop = loops[int(np.argmax(np.abs(areas)))]
    if np.allclose(loop[0], loop[-1]):
        loop = loop[:-1]
    if areas[int(np.argmax(np.abs(areas)))] < 0:
        loop = loop[::-1]
    return resample_closed(loop, points)


def read_user_shape(path: Path, contour_points: int = 1024) -> UserShape:
    mesh, scale, offset, rule = to_vehicle_frame(load_mesh(path))
    try:
        contour = silhouette(mesh, contour_points)
    except MeshError as error:
        raise MeshError(f"{path}: {error}") from None
    return UserShape(mesh, contour, scale, offset, rule)


def deform_mesh(mesh: trimesh.Trimesh, lattice: ControlLattice, dP: torch.Tensor) -> trimesh.Trimesh:
    """The mesh with the 2D FFD displacement Phi(x, z) dP applied to the (x, z) of every vertex
    (y unchanged): the side-view deformation extruded across the width."""
    vertices = torch.as_tensor(mesh.vertices, dtype=torch.float64)
    moved = weight_matrix(lattice, vertices[:, [0, 2]]) @ dP.to(torch.float64)
    out = vertices.clone()
    out[:, 0] += moved[:, 0]
    out[:, 2] += moved[:, 1]
    return trimesh.Trimesh(out.numpy(), mesh.faces.copy(), process=False)
