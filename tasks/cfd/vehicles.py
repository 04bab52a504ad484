"""A parametric 2D vehicle family for drag data sets (spec §3.1; every choice is ours).

A vehicle is a side silhouette on x in [0, 1] (lengths in units of L): the solid is
z_bot(x) <= z <= z_top(x), z_top a PCHIP through key points that depend on the body type,
z_bot the ground clearance with a front lip and a rear diffuser, both blended toward their
mid-line by quarter ellipses at the nose and the tail. The 3D counterpart lofts a superellipse
cross-section of width w(x) over the same silhouette. Both have exact, vectorised inside tests
(the LBM mask is evaluated at node centres: no ray casting, no voxel inflation).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import trimesh
from scipy.interpolate import PchipInterpolator

from tasks.core.seeding import derive_seed

BODY_TYPES = ("fastback", "notchback", "estateback", "pickup")
# The generator parameters, one vector per shape (same meaning for every type, so part 2's GBT
# baseline can read them): x_r = roof end; the rear height h_t is reached at x_d (fastback and
# estateback: x_d = 1; notchback: deck start; pickup: end of the cab's step, x_r + STEP).
PARAMETER_NAMES = ("g", "a_d", "l_d", "H", "h_n", "x_b", "h_b", "x_w", "x_r", "x_d", "h_t", "r_n", "r_t",
                   "W", "W_t", "n")
LIP_HEIGHT = 0.02  # front lip: z_bot rises by this much over the first LIP_LENGTH (our choice)
LIP_LENGTH = 0.05
MESH_THICKNESS_FLOOR = 1e-4  # thinnest end section of the 3D mesh, in units of L
STEP = 0.02  # the pickup's "vertical" cab step, as steep as a PCHIP allows at this width


@dataclass(frozen=True)
class Vehicle:
    """One shape: its body type and generator parameters (PARAMETER_NAMES -> value)."""

    body_type: str
    params: dict[str, float]

    def __post_init__(self):
        if self.body_type not in (*BODY_TYPES, "ahmed"):
            raise ValueError(f"body_type: must be one of {(*BODY_TYPES, 'ahmed')}, got {self.body_type!r}")
        missing = set(PARAMETER_NAMES) - set(self.params)
        if missing:
            raise ValueError(f"params: missing {sorted(missing)} for a {self.body_type}")

    def vector(self) -> np.ndarray:
        return np.array([self.params[k] for k in PARAMETER_NAMES], dtype=np.float64)

    # ------------------------------------------------------------ 2D silhouette

    @cached_property
    def _top(self) -> PchipInterpolator:
        p = self.params
        knots = [(0.0, p["g"] + p["h_n"]), (p["x_b"], p["h_b"]), (p["x_w"], p["H"]), (p["x_r"], p["H"])]
        if self.body_type == "ahmed":  # straight slant: collinear knots keep the PCHIP straight
            knots += [(x, p["H"] + (x - p["x_r"]) * (p["h_t"] - p["H"]) / (1 - p["x_r"]))
                      for x in np.linspace(p["x_r"], 1.0, 6)[1:]]
        else:
            knots += [(p["x_d"], p["h_t"])] + ([(1.0, p["h_t"])] if p["x_d"] < 1.0 else [])
        x, z = np.array(knots).T
        keep = np.concatenate([[True], np.diff(x) > 1e-9])  # e.g. Ahmed's bonnet/windscreen knots coincide
        return PchipInterpolator(x[keep], z[keep])

    def _bottom_raw(self, x: np.ndarray) -> np.ndarray:
        p = self.params
        lip = LIP_HEIGHT * np.clip(1 - x / LIP_LENGTH, 0, None) if self.body_type != "ahmed" else 0.0
        diffuser = np.tan(p["a_d"]) * np.clip(x - (1 - p["l_d"]), 0, None)
        return p["g"] + lip + diffuser

    def _rounding(self, x: np.ndarray, half: np.ndarray) -> np.ndarray:
        """How far each curve moves toward the mid-line: quarter ellipses of horizontal radius r_n
        (front) / r_t (rear) and vertical radius min(r, half-thickness)."""
        drop = np.zeros_like(x)
        for r, distance in ((self.params["r_n"], x), (self.params["r_t"], 1 - x)):
            if r > 0:
                s = np.clip((r - distance) / r, 0, 1)
                drop = np.maximum(drop, np.minimum(r, half) * (1 - np.sqrt(1 - s ** 2)))
        return drop

    def curves(self, x) -> tuple[np.ndarray, np.ndarray]:
        """(z_bot, z_top) at stations x in [0, 1]."""
        x = np.asarray(x, dtype=np.float64)
        bot, top = self._bottom_raw(x), self._top(x)
        drop = self._rounding(x, (top - bot) / 2)
        return bot + drop, top - drop

    def inside(self, points) -> np.ndarray:
        """bool[N] for points[N, 2] = (x, z): solid iff 0 <= x <= 1 and z_bot(x) <= z <= z_top(x)."""
        points = np.asarray(points, dtype=np.float64)
        x, z = points[:, 0], points[:, 1]
        bot, top = self.curves(np.clip(x, 0, 1))
        return (x >= 0) & (x <= 1) & (z >= bot) & (z <= top)

    @cached_property
    def h_ref(self) -> float:
        """Frontal height (2D reference area per unit span): extent of the silhouette projected on z."""
        bot, top = self.curves(np.linspace(0, 1, 4001))
        return float(top.max() - bot.min())

    def contour(self, n: int, dense: int = 4000) -> tuple[np.ndarray, np.ndarray]:
        """(points[n, 2], outward normals[n, 2]): the closed silhouette, counter-clockwise (bottom
        front to rear, then top rear to front), resampled to n points equally spaced in arc length."""
        x = 0.5 * (1 - np.cos(np.linspace(0, np.pi, dense)))  # clustered at the rounded ends
        bot, top = self.curves(x)
        loop = np.concatenate([np.stack([x, bot], 1), np.stack([x[::-1], top[::-1]], 1)])
        loop = loop[np.linalg.norm(np.diff(loop, axis=0, append=loop[:1]), axis=1) > 1e-12]
        points = resample_closed(loop, n)
        tangent = np.roll(points, -1, axis=0) - np.roll(points, 1, axis=0)
        normals = np.stack([tangent[:, 1], -tangent[:, 0]], 1)
        return points, normals / np.linalg.norm(normals, axis=1, keepdims=True)

    # ------------------------------------------------------------ 3D loft

    @cached_property
    def _width(self) -> PchipInterpolator:
        W, W_t = self.params["W"], self.params["W_t"]
        return PchipInterpolator([0.0, 0.15, 0.8, 1.0], [0.75 * W, W, W, W_t])

    def width(self, x) -> np.ndarray:
        return self._width(np.asarray(x, dtype=np.float64))

    def inside_3d(self, points) -> np.ndarray:
        """bool[N] for points[N, 3] = (x, y, z), y = 0 the mid-plane:
        |2y/w(x)|^n + |2(z - z_c(x))/(z_top - z_bot)|^n <= 1 for x in [0, 1]."""
        points = np.asarray(points, dtype=np.float64)
        x, y, z = points.T
        xc = np.clip(x, 0, 1)
        bot, top = self.curves(xc)
        height = np.maximum(top - bot, 1e-12)
        n = self.params["n"]
        measure = np.abs(2 * y / self.width(xc)) ** n + np.abs(2 * (z - (top + bot) / 2) / height) ** n
        return (x >= 0) & (x <= 1) & (measure <= 1)

    def _thick(self, tip: float, inner: float, floor: float = MESH_THICKNESS_FLOOR) -> float:
        """The station nearest `tip` (0 or 1) where the section is at least `floor` thick: a rounded
        nose or tail closes to a line, whose zero-height ring would make degenerate faces that an
        STL round trip merges away (the mesh stops being watertight)."""
        bot, top = self.curves(np.array([tip]))
        if top[0] - bot[0] >= floor:
            return tip
        thin, thick = tip, inner
        for _ in range(50):
            middle = (thin + thick) / 2
            bot, top = self.curves(np.array([middle]))
            thin, thick = (middle, thick) if top[0] - bot[0] < floor else (thin, middle)
        return thick

    def mesh(self, stations: int = 48, angles: int = 40) -> trimesh.Trimesh:
        """Watertight, outward-oriented surface: a stations x angles grid of the superellipse loft
        (two triangles per quad), both end caps fanned to their centre."""
        start, end = self._thick(0.0, 0.5), self._thick(1.0, 0.5)
        x = start + (end - start) * 0.5 * (1 - np.cos(np.linspace(0, np.pi, stations)))
        theta = np.linspace(0, 2 * np.pi, angles, endpoint=False)
        bot, top = self.curves(x)
        n = self.params["n"]
        c, s = np.cos(theta), np.sin(theta)
        y = 0.5 * self.width(x)[:, None] * np.sign(c) * np.abs(c) ** (2 / n)
        z = ((top + bot) / 2)[:, None] + ((top - bot) / 2)[:, None] * np.sign(s) * np.abs(s) ** (2 / n)
        ring = np.stack([np.broadcast_to(x[:, None], y.shape), y, z], -1).reshape(-1, 3)
        centres = np.array([[start, 0.0, (top[0] + bot[0]) / 2], [end, 0.0, (top[-1] + bot[-1]) / 2]])
        vertices = np.concatenate([ring, centres])
        k, j = np.meshgrid(np.arange(stations - 1), np.arange(angles), indexing="ij")
        a, b = k * angles + j, k * angles + (j + 1) % angles  # quad corners on station k ...
        a2, b2 = a + angles, b + angles  # ... and on station k + 1
        # theta runs counter-clockwise seen from +x, so (a, b, a2) faces outward.
        sides = np.concatenate([np.stack([a, b, a2], -1), np.stack([b, b2, a2], -1)]).reshape(-1, 3)
        j = np.arange(angles)
        front = np.stack([np.full(angles, len(ring)), (j + 1) % angles, j], -1)
        last = (stations - 1) * angles
        rear = np.stack([np.full(angles, len(ring) + 1), last + j, last + (j + 1) % angles], -1)
        return trimesh.Trimesh(vertices, np.concatenate([sides, front, rear]), process=False)


def resample_closed(loop: np.ndarray, n: int) -> np.ndarray:
    """n points equally spaced in arc length along the closed polyline `loop` (first point kept)."""
    closed = np.concatenate([loop, loop[:1]])
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(closed, axis=0), axis=1))])
    targets = np.linspace(0, arc[-1], n, endpoint=False)
    return np.stack([np.interp(targets, arc, closed[:, d]) for d in range(loop.shape[1])], 1)


def export_stl(mesh: trimesh.Trimesh, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    mesh.export(path)
    return path


# ---------------------------------------------------------------- sampling

def sample_vehicle(body_type: str, rng: np.random.Generator) -> Vehicle:
    """One random shape of `body_type` with the spec's ranges (§3.1; x_r of fastback/notchback,
    the notchback deck start x_d and the rear width W_t are our choice)."""
    if body_type not in BODY_TYPES:
        raise ValueError(f"body_type: must be one of {BODY_TYPES}, got {body_type!r}")
    def u(low: float, high: float) -> float:
        return float(rng.uniform(low, high))

    H = u(0.28, 0.40)
    p = {"g": u(0.035, 0.06), "a_d": np.deg2rad(u(0.0, 8.0)), "l_d": u(0.10, 0.20), "H": H, "h_n": u(0.12, 0.20),
         "x_b": u(0.22, 0.32), "h_b": u(0.55, 0.70) * H, "x_w": u(0.40, 0.48),
         "r_n": u(0.03, 0.08), "r_t": u(0.0, 0.03), "W": u(0.38, 0.46), "n": u(4.0, 10.0)}
    p["W_t"] = u(0.85, 0.95) * p["W"]
    if body_type == "fastback":
        p |= {"x_r": u(0.55, 0.65), "x_d": 1.0, "h_t": u(0.55, 0.75) * H}
    elif body_type == "notchback":
        p |= {"x_r": u(0.60, 0.68), "x_d": u(0.80, 0.88), "h_t": u(0.60, 0.75) * H}
    elif body_type == "estateback":
        p |= {"x_r": u(0.85, 0.93), "x_d": 1.0, "h_t": u(0.50, 0.70) * H}
    else:  # pickup: cab roof to x_c, step down to the bed, flat to the tail
        x_c = u(0.50, 0.60)
        p |= {"x_r": x_c, "x_d": x_c + STEP, "h_t": u(0.50, 0.65) * H}
    return Vehicle(body_type, {k: float(v) for k, v in p.items()})


def sample_family(per_type: int, seed: int) -> list[Vehicle]:
    """per_type shapes of each body type, types interleaved; shape k depends only on (seed, k)."""
    return [sample_vehicle(body_type, np.random.default_rng(derive_seed(seed, "vehicle", body_type, k)))
            for k in range(per_type) for body_type in BODY_TYPES]


def ahmed_body(slant_deg: float) -> Vehicle:
    """Ahmed body scaled by its length 1044 mm: height 288, width 389, clearance 50, nose radius
    100, slant 222 mm long at `slant_deg` (published dimensions quoted from memory in the spec)."""
    if not 0 <= slant_deg <= 90:
        raise ValueError(f"slant_deg: must be in [0, 90], got {slant_deg}")
    g, height, slant, phi = 0.048, 0.276, 0.213, np.deg2rad(slant_deg)
    H = g + height
    x_r = 1 - slant * np.cos(phi)
    p = {"g": g, "a_d": 0.0, "l_d": 0.0, "H": H, "h_n": height, "x_b": x_r / 3, "h_b": H, "x_w": 2 * x_r / 3,
         "x_r": x_r, "x_d": 1.0, "h_t": H - slant * np.sin(phi), "r_n": 0.096, "r_t": 0.0, "W": 0.373,
         "W_t": 0.373, "n": 10.0}
    return Vehicle("ahmed", {k: float(v) for k, v in p.items()})
