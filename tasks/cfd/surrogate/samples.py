"""The surrogates' samples: one shape's geometry and labels, and the standardisation of its targets.

All points in body units (L = 1, nose at x = 0, road at z = 0); velocities in units of U_inf; Cp
and Cd dimensionless. Reading a data set into samples is its paper's business.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import torch


@dataclass
class Sample:
    index: int
    body_type: str
    params: np.ndarray  # [16] generator vector (tasks.cfd.vehicles.PARAMETER_NAMES)
    contour: np.ndarray  # [n, 2] dense ordered silhouette
    surface_points: np.ndarray  # [Ns, 2]
    surface_normals: np.ndarray  # [Ns, 2] outward
    surface_cp: np.ndarray  # [Ns]
    volume_points: np.ndarray  # [Nv, 2]
    volume_target: np.ndarray  # [Nv, 3]: u_x/U, u_z/U, Cp
    cd: float
    profile: np.ndarray  # [K] cumulative drag build-up, profile[-1] = cd
    a_ref: float  # frontal height h_ref (2D reference area per unit span)


def select(samples: list[Sample], indices: list[int]) -> list[Sample]:
    """The samples whose shape index is in `indices`, in that order."""
    by_index = {s.index: s for s in samples}
    missing = [i for i in indices if i not in by_index]
    if missing:
        raise KeyError(f"indices: shapes {missing} are not among the loaded samples")
    return [by_index[i] for i in indices]


@dataclass
class Standardizer:
    """Mean/std of the targets over the training samples.

    Cd: scalar. Profile: the mean cumulative profile per bin but ONE scale, the std of the
    deviations pooled over bins, so that a standardized profile is still a cumulative sum of
    standardized increments. (A per-bin std would break that; cd_std would make the profile
    dominate every loss: its mid-body values swing by ~40 cd_std between shapes, see README.)
    Surface Cp: scalar (pooled over points; points are a set, not a fixed grid). Volume: one
    mean/std per channel (u_x, u_z, Cp).
    """

    cd_mean: float
    cd_std: float
    profile_mean: np.ndarray  # [K]
    profile_std: float
    cp_mean: float
    cp_std: float
    volume_mean: np.ndarray  # [3]
    volume_std: np.ndarray  # [3]

    @classmethod
    def fit(cls, samples: list[Sample]) -> Standardizer:
        """From the TRAIN split only (pass only training samples)."""
        if len(samples) < 2:
            raise ValueError(f"samples: need >= 2 training samples to estimate a std, got {len(samples)}")
        cd = np.array([s.cd for s in samples])
        cp = np.concatenate([s.surface_cp for s in samples])
        profile = np.stack([s.profile for s in samples])
        volume = np.concatenate([s.volume_target for s in samples])
        return cls(cd_mean=float(cd.mean()), cd_std=float(cd.std() + 1e-12),
                   profile_mean=profile.mean(0), profile_std=float(profile.std(0).mean() + 1e-12), cp_mean=float(cp.mean()),
                   cp_std=float(cp.std() + 1e-12), volume_mean=volume.mean(0), volume_std=volume.std(0) + 1e-12)

    def standardized(self, sample: Sample) -> dict[str, np.ndarray]:
        """The sample's targets in standardized units: cd [], profile [K], surface_cp [Ns], volume [Nv, 3]."""
        return {"cd": np.float64((sample.cd - self.cd_mean) / self.cd_std),
                "profile": (sample.profile - self.profile_mean) / self.profile_std,
                "surface_cp": (sample.surface_cp - self.cp_mean) / self.cp_std,
                "volume": (sample.volume_target - self.volume_mean) / self.volume_std}

    def physical(self, out: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """A model's standardized outputs (cd [B], profile [B, K], surface_cp [B, Ns], volume [B, Nv, 3])
        in physical units; differentiable (torch), other keys dropped."""
        like = out["cd"]

        def tensor(value):
            return torch.as_tensor(value, dtype=like.dtype, device=like.device)

        return {"cd": self.cd_mean + self.cd_std * out["cd"],
                "profile": tensor(self.profile_mean) + self.profile_std * out["profile"],
                "surface_cp": self.cp_mean + self.cp_std * out["surface_cp"],
                "volume": tensor(self.volume_mean) + tensor(self.volume_std) * out["volume"]}

    def profile_end_in_cd_units(self, profile_last: torch.Tensor) -> torch.Tensor:
        """A standardized profile's last entry, C(1), on the standardized Cd scale (for C(1) = Cd)."""
        return (self.profile_mean[-1] + self.profile_std * profile_last - self.cd_mean) / self.cd_std

    def to_dict(self) -> dict:
        return {f.name: np.asarray(getattr(self, f.name)).tolist() for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict) -> Standardizer:
        return cls(**{f.name: (np.asarray(data[f.name], dtype=np.float64) if f.type == "np.ndarray"
                               else float(data[f.name])) for f in fields(cls)})
