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
Coefficients come in as an array, so one compiled kernel serves every tau (`kernel_coefficients`). D3Q19 BGK
uses the pair form (`pair_update_lines`): opposite directions share the even part of the equilibrium and differ
in the sign of the odd part, which takes a quarter fewer vector operations and fewer live coefficients than the
matrix form's 118 products (issue 42); D2Q9 and the other collisions keep the matrix form (the data set's labels
are computed with it, and the CUDA kernel uses it for every lattice). The generated module
is written to a cache folder and compiled with `cache=True`: a new worker process loads it. The
same module holds the compiled time loop that calls the kernel and the boundary conditions.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from numba.core.compiler import CompilerBase, DefaultPassBuilder

from . import fused_boundaries
from .kernels import _pairs, collision_matrices
from .lattice import get_lattice

PROBE_OMEGAS = (1.3, 0.7, 1.9)  # entries of A and B are affine in omega (and omega- for TRT): equal at all three = equal
CACHE_FOLDER = Path(os.environ.get("UNIDRAG_KERNEL_CACHE", Path(tempfile.gettempdir()) / "unidrag_lbm_kernels"))


class NoAliasCompiler(CompilerBase):
    """numba's nopython pipeline with every array argument marked `noalias` (callers pass
    disjoint arrays)."""

    def define_pipelines(self):
        self.state.flags.noalias = True
        return [DefaultPassBuilder.define_nopython_pipeline(self.state)]


@dataclass(frozen=True)
class CoefficientSlots:
    """Where each non-zero entry of A (or BGK's scalar A) and B finds its value in the kernel's
    coefficient array: entries equal at every rate share one slot (D3Q19 BGK: 118 entries of B,
    11 values). Distinct slots were 118 loop-invariant broadcasts, far more than the 32 vector
    registers, and the spills to the stack cost more than the arithmetic."""

    a: dict[tuple[int, int], int] | None  # (i, j) -> slot; None: scalar A in slot 0
    b: dict[tuple[int, int], int]  # (i, m) -> slot
    count: int  # slots; slot `count` holds 1.0


@cache
def coefficient_slots(lattice_name: str, collision: str) -> CoefficientSlots:
    lattice = get_lattice(lattice_name)
    probes = [collision_matrices(lattice, omega, collision) for omega in PROBE_OMEGAS]
    keys: dict[tuple, int] = {}  # rounded values at the probe rates -> slot

    def slots(matrices: list[np.ndarray]) -> dict[tuple[int, int], int]:
        stacked = np.stack(matrices, axis=-1)
        found = {}
        for index in zip(*np.nonzero(np.abs(stacked).max(axis=-1) > 1e-14)):
            found[tuple(int(k) for k in index)] = keys.setdefault(tuple(np.round(stacked[index], 12)), len(keys))
        return found

    a_slots = None
    if np.isscalar(probes[0][0]):
        keys[("scalar A",)] = 0
    else:
        a_slots = slots([np.asarray(a) for a, _ in probes])
    return CoefficientSlots(a_slots, slots([b for _, b in probes]), len(keys))


def coefficients(lattice_name: str, collision: str, omega: float, dtype: np.dtype) -> np.ndarray:
    """The kernel's coefficient array at rate omega: one value per slot, then 1."""
    layout = coefficient_slots(lattice_name, collision)
    a, b = collision_matrices(get_lattice(lattice_name), omega, collision)
    values = np.ones(layout.count + 1)
    if layout.a is None:
        values[0] = a
    else:
        for (i, j), slot in layout.a.items():
            values[slot] = a[i, j]
    for (i, m), slot in layout.b.items():
        values[slot] = b[i, m]
    return values.astype(dtype)


def _signed_sum(terms: list[tuple[int, str]]) -> str:
    """'f1 - f3 + ...' from (sign, name) pairs."""
    text = "".join(f" {'+' if s > 0 else '-'} {n}" for s, n in terms if s)
    return (text[3:] if text.startswith(" + ") else "-" + text[3:]) if text else "0"


def coefficient_lines(lattice_name: str, collision: str) -> list[str]:
    """`k<slot> = coef[<slot>]` for every coefficient slot, then `one = coef[<count>]`."""
    count = coefficient_slots(lattice_name, collision).count
    return [f"k{k} = coef[{k}]" for k in range(count)] + [f"one = coef[{count}]"]


def node_update_lines(lattice_name: str, collision: str, averaging: bool, load: str = "src{i}[n]",
                      store: str = "dst{i}[n]", rho_sum: str = "rs[n]", u_sum: str = "us{a}[n]") -> list[str]:
    """The update of one node: read f_i from `load`, write f*_i to `store` (both formatted with the
    direction i), on averaging steps add rho and u_a to `rho_sum` and `u_sum` (formatted with a).
    Shared by the CPU loop (kernel_source) and the CUDA kernel (fused_cuda_kernels), which index
    differently."""
    lattice = get_lattice(lattice_name)
    q, dim, c = lattice.q, lattice.dim, lattice.c
    layout = coefficient_slots(lattice_name, collision)
    moments = ["rho", *(f"j{a}" for a in range(dim)), *(f"p{a}{b}" for a, b in _pairs(dim))]
    body = [f"f{i} = {load.format(i=i)}" for i in range(q)]
    body.append("rho = " + " + ".join(f"f{i}" for i in range(q)))
    body += [f"j{a} = " + _signed_sum([(int(c[i, a]), f"f{i}") for i in range(q)]) for a in range(dim)]
    body.append("inv = one / rho")
    body += [f"p{a}{b} = j{a} * j{b} * inv" for a, b in _pairs(dim)]
    for i in range(q):
        terms = [f"k0 * f{i}"] if layout.a is None else [f"k{slot} * f{j}" for (row, j), slot in layout.a.items() if row == i]
        terms += [f"k{slot} * {moments[m]}" for (row, m), slot in layout.b.items() if row == i]
        body.append(f"{store.format(i=i)} = " + " + ".join(terms))
    if averaging:
        body.append(f"{rho_sum} += rho")
        body += [f"{u_sum.format(a=a)} += j{a} * inv" for a in range(dim)]
    return body


PAIR_FORM = {("D3Q19", "bgk")}  # (lattice, collision) whose CPU kernel uses pair_update_lines


def pair_weights(lattice_name: str) -> list[float]:
    """The lattice's distinct weights, largest first (rest, axis, diagonal)."""
    distinct: dict[float, float] = {}
    for w in get_lattice(lattice_name).w:
        distinct.setdefault(round(float(w), 12), float(w))
    return sorted(distinct.values(), reverse=True)


def pair_coefficients(lattice_name: str, omega: float, dtype: np.dtype) -> np.ndarray:
    """The pair form's coefficient array: 1 - omega, omega w_k for each distinct weight, then 3, 4.5, 1.5, 1 (as
    array entries, so that the kernel's arithmetic stays in the buffers' precision)."""
    return np.array([1.0 - omega, *(omega * w for w in pair_weights(lattice_name)), 3.0, 4.5, 1.5, 1.0]).astype(dtype)


def kernel_coefficients(lattice_name: str, collision: str, omega: float, dtype: np.dtype) -> np.ndarray:
    """The coefficient array of the CPU kernel that compiled_solver generates for this lattice and collision."""
    if (lattice_name, collision) in PAIR_FORM:
        return pair_coefficients(lattice_name, omega, dtype)
    return coefficients(lattice_name, collision, omega, dtype)


def pair_coefficient_lines(lattice_name: str) -> list[str]:
    """The pair form's coefficients by name: om1 = 1 - omega, ow<k> = omega w_k, k3, k45, k15, one."""
    n_weights = len(pair_weights(lattice_name))
    return (["om1 = coef[0]"] + [f"ow{k} = coef[{1 + k}]" for k in range(n_weights)]
            + [f"{name} = coef[{n_weights + 1 + k}]" for k, name in enumerate(("k3", "k45", "k15", "one"))])


def pair_update_lines(lattice_name: str, averaging: bool, load: str = "src{i}[n]", store: str = "dst{i}[n]",
                      rho_sum: str = "rs[n]", u_sum: str = "us{a}[n]") -> list[str]:
    """BGK's node update in pair form (same arguments as node_update_lines; coefficients of pair_coefficients):
    f*_i = (1 - omega) f_i + E_i + O_i and f*_opp(i) = (1 - omega) f_opp(i) + E_i - O_i, with
    E_i = omega w_i rho (1 + 4.5 (c_i.u)^2 - 1.5 u^2) and O_i = 3 omega w_i rho c_i.u: the same f* as the matrix
    form up to rounding."""
    lattice = get_lattice(lattice_name)
    q, dim, c, weights = lattice.q, lattice.dim, lattice.c, pair_weights(lattice_name)
    body = [f"f{i} = {load.format(i=i)}" for i in range(q)]
    body.append("rho = " + " + ".join(f"f{i}" for i in range(q)))
    body += [f"j{a} = " + _signed_sum([(int(c[i, a]), f"f{i}") for i in range(q)]) for a in range(dim)]
    body.append("inv = one / rho")
    body += [f"u{a} = j{a} * inv" for a in range(dim)]
    body.append("base = one - k15 * (" + " + ".join(f"u{a} * u{a}" for a in range(dim)) + ")")
    body += [f"r{k} = ow{k} * rho" for k in range(len(weights))]
    for i in range(q):
        k, opposite = [round(w, 12) for w in weights].index(round(float(lattice.w[i]), 12)), int(lattice.opposite[i])
        if not c[i].any():
            body.append(f"{store.format(i=i)} = om1 * f{i} + r{k} * base")
        elif i < opposite:
            body.append(f"cu{i} = " + _signed_sum([(int(c[i, a]), f"u{a}") for a in range(dim)]))
            body.append(f"e{i} = r{k} * (base + k45 * cu{i} * cu{i})")
            body.append(f"d{i} = r{k} * k3 * cu{i}")
            body.append(f"{store.format(i=i)} = om1 * f{i} + e{i} + d{i}")
            body.append(f"{store.format(i=opposite)} = om1 * f{opposite} + e{i} - d{i}")
    if averaging:
        body.append(f"{rho_sum} += rho")
        body += [f"{u_sum.format(a=a)} += u{a}" for a in range(dim)]
    return body


def kernel_source(lattice_name: str, collision: str, averaging: bool) -> str:
    """Python source of `step(f_0..f_Q-1, g_0..g_Q-1, rho_sum, u_0..u_D-1, start, stop, offsets, coef)`:
    f_i, g_i the direction rows of the two buffers; nodes start..stop-1 collide and push by
    offsets[i]. The span runs from the first to the last real node, padding in between included:
    a padding node pushes only into face populations, which the boundary conditions overwrite, and
    one long loop beats a loop per row (slicing Q rows per grid row cost more than the row)."""
    lattice = get_lattice(lattice_name)
    q, dim = lattice.q, lattice.dim
    arrays = [f"f{i}_" for i in range(q)] + [f"g{i}_" for i in range(q)] + ["rho_sum"] + [f"u{a}_" for a in range(dim)]
    pair_form = (lattice_name, collision) in PAIR_FORM
    coefficient = pair_coefficient_lines(lattice_name) if pair_form else coefficient_lines(lattice_name, collision)
    update = pair_update_lines(lattice_name, averaging) if pair_form else node_update_lines(lattice_name, collision, averaging)
    lines = [f"def step({', '.join(arrays)}, start, stop, offsets, coef):"]
    lines += [f"    o{i} = offsets[{i}]" for i in range(q)]
    lines += [f"    {line}" for line in coefficient]
    lines += [f"    src{i} = f{i}_[start:stop]" for i in range(q)]
    lines += [f"    dst{i} = g{i}_[start + o{i}:stop + o{i}]" for i in range(q)]
    if averaging:
        lines += ["    rs = rho_sum[start:stop]"]
        lines += [f"    us{a} = u{a}_[start:stop]" for a in range(dim)]
    lines.append("    for n in range(stop - start):")
    lines += [f"        {line}" for line in update]
    return "\n".join(lines) + "\n"


def time_loop_source(lattice_name: str) -> str:
    """Python source of `time_loop(buffers [2, Q, Np], first, last, first_averaged, start, stop, offsets,
    coef, rho_sum, u_sum, speeds, forces, profile, links, nodes, lattice, ground, top_wall)`: steps
    first..last-1, each one collide + push pass from buffers[step % 2] into the other buffer (the
    averaging kernel from first_averaged on) followed by fused_boundaries.apply_boundaries. One
    compiled loop: per step the Python dispatch of eight compiled calls cost as much as the
    boundary work itself."""
    lattice = get_lattice(lattice_name)
    rows = lambda name, n: ", ".join(f"{name}[{i}]" for i in range(n))
    arguments = f"{rows('f', lattice.q)}, {rows('g', lattice.q)}, rho_sum, {rows('u_sum', lattice.dim)}, start, stop, offsets, coef"
    return (
        "def time_loop(buffers, first, last, first_averaged, start, stop, offsets, coef, rho_sum, u_sum, speeds, forces,\n"
        "              profile, links, nodes, lattice, ground, top_wall):\n"
        "    for step in range(first, last):\n"
        "        f, g = buffers[step % 2], buffers[1 - step % 2]\n"
        "        averaging = step >= first_averaged\n"
        "        if averaging:\n"
        f"            step_averaging({arguments})\n"
        "        else:\n"
        f"            step_plain({arguments})\n"
        "        apply_boundaries(f, g, speeds[step], averaging, forces[step], profile, links, nodes, lattice, ground, top_wall)\n")


KERNEL_DECORATOR = ("@njit(cache=True, nogil=True, error_model='numpy', fastmath={'contract', 'arcp'}, boundscheck=False,\n"
                    "      pipeline_class=NoAliasCompiler)\n")


@cache
def compiled_solver(lattice_name: str, collision: str):
    """The generated module: kernels `step_plain` and `step_averaging`, and `time_loop` (written to
    CACHE_FOLDER once, then loaded from numba's disk cache). Its name hashes its text and the
    boundary functions' source, which numba's cache does not track for a caller."""
    kernels = [kernel_source(lattice_name, collision, averaging).replace(
        "def step(", KERNEL_DECORATOR + f"def step_{'averaging' if averaging else 'plain'}(") for averaging in (False, True)]
    boundaries = hashlib.sha256(Path(fused_boundaries.__file__).read_bytes()).hexdigest()
    module_text = (f"# fused_boundaries.py {boundaries}\nfrom numba import njit\n\n"
                   "from tasks.cfd.fused_boundaries import apply_boundaries\nfrom tasks.cfd.fused_kernel import NoAliasCompiler\n\n\n"
                   + "\n\n".join(kernels) + "\n\n@njit(cache=True, nogil=True)\n" + time_loop_source(lattice_name))
    name = "lbm_solver_" + hashlib.sha256(module_text.encode()).hexdigest()[:16]
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
    return module
