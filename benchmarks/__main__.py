"""`python -m benchmarks` (or `make benchmark`): every benchmark of this folder, JSON under benchmarks/results/.

A benchmark is a module here with a `main()` callable without arguments, so a paper's benchmark adds itself by
being here. They run in name order, and the smoke-cost one, which reruns every paper's smoke pipeline, last."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

FOLDER = Path(__file__).parent
LAST = "ci_budget"


def benchmark_modules(folder: Path = FOLDER) -> list[str]:
    """The benchmark modules' names in the order they run (read from their source: nothing is imported)."""
    names = sorted(path.stem for path in folder.glob("*.py") if not path.stem.startswith("_") and has_main(path))
    return sorted(names, key=lambda name: name == LAST)


def has_main(path: Path) -> bool:
    """Whether the module defines a top-level `main` whose every argument has a default."""
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            arguments = node.args
            return len(arguments.defaults) == len(arguments.posonlyargs) + len(arguments.args) and all(
                default is not None for default in arguments.kw_defaults)
    return False


if __name__ == "__main__":
    for name in benchmark_modules():
        print(f"== benchmarks.{name}", flush=True)
        importlib.import_module(f"benchmarks.{name}").main()
