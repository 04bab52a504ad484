"""Each stage's code deps, derived from its imports, so `dvc repro` reruns exactly what an edit touches.

A stage runs `STAGES[stage]` of `flows/<paper>/pipeline.py`. Its code deps are:
- `pipeline.py` itself (the file that runs) and the package `__init__.py` files on every import path;
- within `pipeline.py`, only what the stage's flow reaches: the top-level functions, classes and
  constants it names, transitively, and the modules those names were imported from;
- from any other module of the repository, everything it imports, anywhere in the file (imports
  inside functions included), transitively.

So an edit to the evaluate stage's claim module reruns evaluate alone, and an edit to one
optimizer reruns the stages of the papers that import it and nothing else. `python -m stages.generate` writes
them into each `stages/<paper>/dvc.yaml`.
"""
from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

REPO_PACKAGES = ("tasks", "flows", "stages")


class DepsError(ValueError):
    """The imports cannot be followed statically (a name the package only provides lazily, a missing module)."""


@dataclass(frozen=True)
class Module:
    name: str      # dotted: tasks.optim.muon
    path: Path     # absolute
    is_package: bool

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def find_module(root: Path, name: str) -> Module | None:
    """The repository module of dotted `name`, or None when it is not one of ours."""
    parts = name.split(".")
    if parts[0] not in REPO_PACKAGES:
        return None
    base = root.joinpath(*parts)
    if (base / "__init__.py").exists():
        return Module(name, base / "__init__.py", True)
    if base.with_suffix(".py").exists():
        return Module(name, base.with_suffix(".py"), False)
    return None


def _parse(module: Module) -> ast.Module:
    """The module's syntax tree, parsed once per version of the file (a package __init__ is read for every name
    imported from it, by every stage)."""
    stat = module.path.stat()
    return _parse_file(module.path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _parse_file(path: Path, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.package.split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def _targets(root: Path, module: Module, node: ast.Import | ast.ImportFrom) -> dict[str, Module]:
    """Local name -> repository module an import statement binds (outside modules are left out)."""
    bound = {}
    if isinstance(node, ast.Import):  # `import tasks.x.y` binds `tasks`: the dotted module stands for it
        for alias in node.names:
            target = find_module(root, alias.name)
            if target is not None:
                bound[alias.asname or alias.name.split(".")[0]] = target
        return bound
    source = _absolute(module, node)
    package = find_module(root, source)
    if package is None:
        if source.split(".")[0] in REPO_PACKAGES:
            raise DepsError(f"{module.path}: line {node.lineno}: no module {source!r}")
        return bound
    for alias in node.names:
        sub = find_module(root, f"{source}.{alias.name}") if package.is_package else None
        lazy = package.is_package and sub is None and alias.name not in ("*", *_top_level_names(_parse(package)))
        if lazy:
            raise DepsError(f"{module.path}: line {node.lineno}: {alias.name!r} is not bound in {package.path.name} of "
                            f"{source} (a lazily exported name): import it from the module that defines it")
        bound[alias.asname or alias.name] = sub or package
    return bound


def _with_packages(root: Path, module: Module) -> set[Path]:
    """The module's file and the __init__.py of every package above it (Python runs them on import)."""
    paths = {module.path}
    parts = module.name.split(".")
    for i in range(1, len(parts) + 1):
        package = find_module(root, ".".join(parts[:i]))
        if package is not None and package.is_package:
            paths.add(package.path)
    return paths


def module_closure(root: Path, start: list[Module]) -> set[Path]:
    """Files of the modules in `start` and of every repository module they import, transitively."""
    seen: set[Path] = set()
    todo = list(start)
    while todo:
        module = todo.pop()
        if module.path in seen:
            continue
        seen |= _with_packages(root, module)
        seen.add(module.path)
        for node in ast.walk(_parse(module)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                todo.extend(_targets(root, module, node).values())
                if isinstance(node, ast.ImportFrom):  # the package a `from` imports runs too
                    package = find_module(root, _absolute(module, node))
                    if package is not None:
                        todo.append(package)
    return seen


def _used_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _stage_functions(tree: ast.Module, path: Path) -> dict[str, str]:
    """stage name -> name of its flow function, from the `STAGES = {...}` literal."""
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "STAGES" for t in targets):
                if not isinstance(node.value, ast.Dict):
                    break
                return {ast.literal_eval(k): v.id for k, v in zip(node.value.keys, node.value.values)
                        if isinstance(v, ast.Name)}
    raise DepsError(f"{path}: needs a literal `STAGES = {{'stage': flow_function, ...}}`")


def stage_code_deps(root: Path, paper: str, stage: str) -> list[str]:
    """The repository files stage `stage` of `paper` runs, relative to root, sorted."""
    pipeline = find_module(root, f"flows.{paper}.pipeline")
    if pipeline is None:
        raise DepsError(f"paper {paper!r}: no flows/{paper}/pipeline.py")
    tree = _parse(pipeline)
    functions = _stage_functions(tree, pipeline.path)
    if stage not in functions:
        raise DepsError(f"{pipeline.path}: STAGES has no stage {stage!r} (stages: {', '.join(functions)})")
    definitions: dict[str, list[ast.AST]] = {}
    imported: dict[str, Module] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            definitions.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in _used_names(target):
                    definitions.setdefault(name, []).append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update(_targets(root, pipeline, node))
    reached, todo, modules = set(), [functions[stage]], []
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        if name in imported:
            modules.append(imported[name])
        for node in definitions.get(name, []):
            todo.extend(_used_names(node) - reached)
            # imports inside the reached function or class count as its own
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    modules.extend(_targets(root, pipeline, inner).values())
    files = module_closure(root, modules) | _with_packages(root, pipeline)
    return sorted(str(path.relative_to(root)) for path in files)
