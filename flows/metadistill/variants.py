"""The evaluated variants: the baseline student, the distilled student without and with SSFT, the teacher CMA-ES."""
from __future__ import annotations

BASELINE, TEACHER = "baseline", "cmaes"


def md(j: int) -> str:
    return f"md_j{j}"


def variants(ssft_js: list[int]) -> list[str]:
    return [BASELINE] + [md(j) for j in sorted(ssft_js)] + [TEACHER]
