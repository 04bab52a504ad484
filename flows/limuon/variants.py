"""LiMuon's optimizer variants by name (kept free of torch: the params validate names with it).

`muon`, `muon2x` (Muon with twice the steps: equal gradient evaluations), `adamw`, `limuon1` (Option #1),
`limuon2_r<k>` (Option #2, rank k), `muonpp` (Option #1 + clipping); a `-ns5` / `-svd` suffix picks the
orthogonaliser of a Muon-family variant.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

VARIANT_PATTERN = re.compile(r"^(muon|muon2x|adamw|limuon1|muonpp|limuon2_r(\d+))(?:-(ns5|svd))?$")


@dataclass(frozen=True)
class Variant:
    name: str
    family: str                 # "muon" | "adamw" | "limuon"
    option: int = 1             # LiMuon option
    rank: int | None = None     # LiMuon Option #2 rank
    clip: bool = False          # Muon++ = LiMuon #1 + clipping
    steps_factor: int = 1       # Muon-2x runs twice the steps
    orthogonalizer: str | None = None  # None: the setting's


def parse_variant(name: str) -> Variant:
    match = VARIANT_PATTERN.match(name)
    if match is None:
        raise ValueError(f"optimizer: must be muon, muon2x, adamw, limuon1, muonpp or limuon2_r<rank>, optionally "
                         f"with -ns5/-svd, got {name!r}")
    base, rank, orth = match.groups()
    if base == "adamw" and orth:
        raise ValueError(f"optimizer: adamw has no orthogonaliser, got {name!r}")
    if base.startswith("limuon2"):
        return Variant(name, "limuon", option=2, rank=int(rank), orthogonalizer=orth)
    return Variant(name, {"muon": "muon", "muon2x": "muon", "adamw": "adamw"}.get(base, "limuon"),
                   clip=base == "muonpp", steps_factor=2 if base == "muon2x" else 1, orthogonalizer=orth)
