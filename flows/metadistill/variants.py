"""The evaluated variants: the baseline student, the distilled student without and with SSFT, and the teacher
CMA-ES at the students' population size and at `cma`'s default population (4 + floor(3 ln d)), all at one budget."""
from __future__ import annotations

BASELINE, TEACHER, TEACHER_DEFAULT = "baseline", "cmaes", "cmaes_default"


def md(j: int) -> str:
    return f"md_j{j}"


def variants(ssft_js: list[int]) -> list[str]:
    return [BASELINE] + [md(j) for j in sorted(ssft_js)] + [TEACHER, TEACHER_DEFAULT]
