"""The DQ kernels compiled ahead of time: tasks/sync/kernels.py's numba kernels built once into a native extension
(numba.pycc), so that a process which solves once loads them in about a millisecond.

Why: numba's JIT costs every new process 0.2-0.4 s before the first kernel runs, cached kernels or not (importing
numba, then building its typing and lowering registries and compiling its runtime), where a one-shot solve at
n = 400 takes about 10 ms. The extension needs neither numba nor a compiler at run time.

Build it with `python -m tasks.sync.aot` (about 15 s of CPU, a C compiler and numba). It is written to
tasks/sync/__pycache__ (beside numba's own cache: git-ignored, with the checkout's permissions), named after a hash
of kernels.py and this file, so an edit of either leaves it stale and unused (the JIT kernels run) until it is
rebuilt. The arithmetic is the JIT kernels' own source; tests keep both equal to the numpy reference.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sysconfig
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType

FOLDER = Path(__file__).parent
CACHE = FOLDER / "__pycache__"
PREFIX = "sync_kernels_"
# Each exported kernel with the one signature the calling code (tasks/sync/native.py) passes: C-contiguous arrays.
SIGNATURES = {
    "udq_from_matrices": "f8[:,::1](f8[:,:,::1])",
    "sign_fix_kernel": "i8(i8, i8[:,::1], f8[:,::1])",
    "power_kernel": "Tuple((i8, b1))(i8[::1], i8[::1], f8[:,::1], f8[:,::1], f8[:,::1], f8, f8, i8, f8[::1], f8[::1])",
    "gpm_kernel": "Tuple((i8, b1))(i8[::1], i8[::1], f8[:,::1], f8[:,::1], f8, f8, f8, i8, f8[::1], f8[::1])",
}


def module_name(folder: Path = FOLDER) -> str:
    """The extension's module name: a hash of the kernels' source and of this file (signatures, build)."""
    source = (folder / "kernels.py").read_bytes() + (folder / "aot.py").read_bytes()
    return PREFIX + hashlib.sha256(source).hexdigest()[:16]


def module_path(folder: Path = FOLDER) -> Path:
    return folder / "__pycache__" / (module_name(folder) + sysconfig.get_config_var("EXT_SUFFIX"))


def load_extension(path: Path) -> ModuleType:
    """Import a built extension from its file (its module name is the file name's stem)."""
    name = path.name.split(".")[0]
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, path, loader=loader))
    loader.exec_module(module)
    return module


@cache
def load() -> ModuleType | None:
    """The built extension of the current kernels, or None where it has not been built (or is stale)."""
    path = module_path()
    return load_extension(path) if path.is_file() else None


def build(folder: Path = CACHE) -> Path:
    """Compile the kernels into `folder` (atomically: a build running beside this one never sees half a file) and
    remove the extensions of earlier kernel sources there. Returns the extension's path."""
    from numba.pycc import CC

    from tasks.sync import kernels

    name, suffix = module_name(), sysconfig.get_config_var("EXT_SUFFIX")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        compiler = CC(name)
        compiler.output_dir = scratch
        for kernel, signature in SIGNATURES.items():
            compiler.export(kernel, signature)(getattr(kernels, kernel).py_func)
        compiler.compile()
        target = folder / (name + suffix)
        os.replace(Path(scratch) / (name + suffix), target)
    for stale in folder.glob(f"{PREFIX}*{suffix}"):
        if stale != target:
            stale.unlink()
    return target


if __name__ == "__main__":
    print(f"built {build()}")
