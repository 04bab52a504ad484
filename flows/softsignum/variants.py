"""The SoftSignum paper's optimizer names (kept free of torch: the params validate names with it).

Methods: signum, softsignum, hardswitch, muon, softmuon, adamw, lion. Controls of SoftSignum's clamp, run as
reported variants (they never decide a claim):
- `hardswitch_x<k>`: HardSwitchSign with u = k d after T_sign (switch_scale = k). With k = tau_max it is what a
  SoftSignum whose schedule sits at tau_max everywhere does on the small entries (tanh(tau_max d) ~ tau_max d):
  if it matches SoftSignum, the schedule is inert and the gain is the clamp's.
- `softsignum_unclamped`: SoftSignum with tau_max = 1e9 (SoftMuon's official default), so the fitted schedule acts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

BASES = ("signum", "softsignum", "hardswitch", "muon", "softmuon", "adamw", "lion")
UNCLAMPED_TAU_MAX = 1e9
HARDSWITCH_SCALED = re.compile(r"^hardswitch_x(\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class Variant:
    name: str
    base: str                                        # the registry optimizer it builds
    overrides: dict = field(default_factory=dict)    # hyperparameters it sets on top of the paper's

    @property
    def is_control(self) -> bool:
        return self.name != self.base


def parse_variant(name: str) -> Variant:
    if name in BASES:
        return Variant(name, name)
    if name == "softsignum_unclamped":
        return Variant(name, "softsignum", {"tau_max": UNCLAMPED_TAU_MAX})
    if (match := HARDSWITCH_SCALED.match(name)) and float(match.group(1)) > 0:
        return Variant(name, "hardswitch", {"switch_scale": float(match.group(1))})
    raise ValueError(f"optimizer: must be one of {', '.join(BASES)}, softsignum_unclamped or hardswitch_x<scale>, "
                     f"got {name!r}")


def hardswitch_control(tau_max: float) -> str:
    """The name of HardSwitch x tau_max (hardswitch_x20 for tau_max 20)."""
    return f"hardswitch_x{tau_max:g}"


def base_of(name: str) -> str:
    return parse_variant(name).base
