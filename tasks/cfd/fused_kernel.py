"""The fused collide + stream pass of the numba LBM, generated per lattice and collision model.

One pass over the nodes reads the Q populations of a node, forms [rho, j, j_a j_b / rho], writes
f* = A f + B m (tasks/cfd/kernels.py's matrices) straight to the neighbour x + c_i in the other
buffer (push streaming) and, on averaging steps, adds rho and u to the running sums. Buffers are
flat and padded by one node on every side of every body, so the push needs no bounds tests and
each direction is a constant offset. What it takes for LLVM to vectorise the node loop (16 floats
per instruction; a scalar loop ran at a fifth of the speed): directions unrolled with the zero
entries of A and B left out; every direction its own array argument, declared non-aliasing
(`NoAliasCompiler`: the direction rows are disjoint slices of one buffer, and without the
guarantee LLVM would need 2 Q^2 run-time overlap checks and gives up); row slices indexed from 0
(an index that might be negative costs a wrap-around select); error_model="numpy" (the
ZeroDivisionError check of 1 / rho is an early exit, which blocks vectorisation).
Coefficients come in as an array, so one compiled kernel serves every tau. The generated module
is written to a cache folder and compiled with `cache=True`: a new worker process loads it.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from functools import cache
from pathlib import Path

import numpy as np

from numba.core.compiler import CompilerBase, DefaultPassBuilder

from .kernels import _pairs, collision_matrices
from .lattice import get_lattice

PROBE_OMEGAS = (1.3, 0.7)  # the sparsity pattern of A and B: entries non-zero at either rate
CACHE_FOLDER = Path(os.environ.get("UNIDRAG_KERNEL_CACHE", Path(tempfile.gettempdir()) / "unidrag_lbm_kernels"))


class NoAliasCompiler(CompilerBase):
    """numba's nopython pipeline with every array argument marked `noalias` (callers pass
    disjoint arrays)."""

    def define_pipelines(self):
        self.state.flags.noalias = True
        return [DefaultPassBuilder.define_nopython_pipeline(self.state)]


def _pattern(lattice_name: str, collision: str) -> tuple[np.ndarray | None, np.ndarray]:
    """(A's non-zero mask or None for BGK's scalar A, B's non-zero mask)."""
    lattice = get_lattice(lattice_name)
    masks = [collision_matrices(lattice, omega, collision) for omega in PROBE_OMEGAS]
    b_mask = np.logical_or.reduce([np.abs(b) > 1e-14 for _, b in masks])
    if np.isscalar(masks[0][0]):
        return None, b_mask
    return np.logical_or.reduce([np.abs(a) > 1e-14 for a, _ in masks]), b_mask


def coefficients(lattice_name: str, collision: str, omega: float, dtype: np.dtype) -> np.ndarray:
    """The kernel's coefficient array: A's entries (or the scalar), then B's, then 1, in the
    order the generated source reads them."""
    a_mask, b_mask = _pattern(lattice_name, collision)
    a, b = collision_matrices(get_lattice(lattice_name), omega, collision)
    a_values = [a] if a_mask is None else list(np.asarray(a)[a_mask])
    return np.array([*a_values, *b[b_mask], 1.0], dtype=dtype)


def _signed_sum(terms: list[tuple[int, str]]) -> str:
    """'f1 - f3 + ...' from (sign, name) pairs."""
    text = "".join(f" {'+' if s > 0 else '-'} {n}" for s, n in terms if s)
    return (text[3:] if text.startswith(" + ") else "-" + text[3:]) if text else "0"


def kernel_source(lattice_name: str, collision: str, averaging: bool) -> str:
    """Python source of `step(f_0..f_Q-1, g_0..g_Q-1, rho_sum, u_0..u_D-1, start, stop, offsets, coef)`:
    f_i, g_i the direction rows of the two buffers; nodes start..stop-1 collide and push by
    offsets[i]. The span runs from the first to the last real node, padding in between included:
    a padding node pushes only into face populations, which the boundary conditions overwrite, and
    one long loop beats a loop per row (slicing Q rows per grid row cost more than the row)."""
    lattice = get_lattice(lattice_name)
    q, dim, c = lattice.q, lattice.dim, lattice.c
    a_mask, b_mask = _pattern(lattice_name, collision)
    moments = ["rho", *(f"j{a}" for a in range(dim)), *(f"p{a}{b}" for a, b in _pairs(dim))]
    arrays = [f"f{i}_" for i in range(q)] + [f"g{i}_" for i in range(q)] + ["rho_sum"] + [f"u{a}_" for a in range(dim)]
    lines = [f"def step({', '.join(arrays)}, start, stop, offsets, coef):"]
    lines += [f"    o{i} = offsets[{i}]" for i in range(q)]
    k = 0
    if a_mask is None:
        lines.append(f"    a = coef[{k}]")
        k += 1
    else:
        for i, j in zip(*np.nonzero(a_mask)):
            lines.append(f"    a{i}_{j} = coef[{k}]")
            k += 1
    for i, m in zip(*np.nonzero(b_mask)):
        lines.append(f"    b{i}_{m} = coef[{k}]")
        k += 1
    lines.append(f"    one = coef[{k}]")
    lines += [f"    src{i} = f{i}_[start:stop]" for i in range(q)]
    lines += [f"    dst{i} = g{i}_[start + o{i}:stop + o{i}]" for i in range(q)]
    if averaging:
        lines += ["    rs = rho_sum[start:stop]"]
        lines += [f"    us{a} = u{a}_[start:stop]" for a in range(dim)]
    lines.append("    for n in range(stop - start):")
    body = [f"f{i} = src{i}[n]" for i in range(q)]
    body.append("rho = " + " + ".join(f"f{i}" for i in range(q)))
    body += [f"j{a} = " + _signed_sum([(int(c[i, a]), f"f{i}") for i in range(q)]) for a in range(dim)]
    body.append("inv = one / rho")
    body += [f"p{a}{b} = j{a} * j{b} * inv" for a, b in _pairs(dim)]
    for i in range(q):
        terms = [f"a * f{i}"] if a_mask is None else [f"a{i}_{j} * f{j}" for j in np.nonzero(a_mask[i])[0]]
        terms += [f"b{i}_{m} * {moments[m]}" for m in np.nonzero(b_mask[i])[0]]
        body.append(f"dst{i}[n] = " + " + ".join(terms))
    if averaging:
        body.append("rs[n] += rho")
        body += [f"us{a}[n] += j{a} * inv" for a in range(dim)]
    lines += [f"        {line}" for line in body]
    return "\n".join(lines) + "\n"


@cache
def fused_step(lattice_name: str, collision: str, averaging: bool):
    """The compiled kernel (written to CACHE_FOLDER once, then loaded from numba's disk cache)."""
    source = kernel_source(lattice_name, collision, averaging)
    module_text = "from numba import njit\n\nfrom tasks.cfd.fused_kernel import NoAliasCompiler\n\n\n" + source.replace(
        "def step", "@njit(cache=True, nogil=True, error_model='numpy', fastmath={'contract', 'arcp'}, boundscheck=False,\n"
                    "      pipeline_class=NoAliasCompiler)\ndef step")
    name = "lbm_step_" + hashlib.sha256(module_text.encode()).hexdigest()[:16]
    path = CACHE_FOLDER / f"{name}.py"
    if not path.exists():
        CACHE_FOLDER.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(module_text)
        partial.replace(path)  # atomic: workers compiling at once never read half a file
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.step
