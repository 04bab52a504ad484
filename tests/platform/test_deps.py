"""Each stage's code deps in dvc.yaml are exactly the repository modules its flow imports."""
from pathlib import Path

import pytest

from stages.deps import DepsError, stage_code_deps


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


PIPELINE = """
from tasks.math.solver import solve
from tasks.math import plots
from .claims import check

LIMIT = 3


def generate(params, context):
    return solve(LIMIT)


def helper():
    return check()


def evaluate(params, context):
    from tasks.math.report import table
    return helper(), plots.draw(), table()


STAGES = {"generate": generate, "evaluate": evaluate}
"""


@pytest.fixture
def tree(tmp_path):
    return write(tmp_path, {
        "tasks/__init__.py": "", "tasks/math/__init__.py": "", "flows/__init__.py": "", "flows/toy/__init__.py": "",
        "tasks/math/solver.py": "from tasks.math.linalg import norm\n",
        "tasks/math/linalg.py": "def norm():\n    from tasks.core.numbers import eps\n",
        "tasks/core/__init__.py": "", "tasks/core/numbers.py": "",
        "tasks/math/plots.py": "", "tasks/math/report.py": "", "tasks/math/unused.py": "",
        "flows/toy/claims.py": "from tasks.core.numbers import eps\n",
        "flows/toy/pipeline.py": PIPELINE,
    })


def test_a_stage_depends_on_what_its_flow_reaches_transitively_and_nothing_else(tree):
    packages = ["flows/__init__.py", "flows/toy/__init__.py", "flows/toy/pipeline.py", "tasks/__init__.py"]
    assert stage_code_deps(tree, "toy", "generate") == sorted(packages + [
        "tasks/core/__init__.py", "tasks/core/numbers.py",  # an import inside a function of an imported module
        "tasks/math/__init__.py", "tasks/math/linalg.py", "tasks/math/solver.py"])
    assert stage_code_deps(tree, "toy", "evaluate") == sorted(packages + [
        "flows/toy/claims.py", "tasks/core/__init__.py", "tasks/core/numbers.py",
        "tasks/math/__init__.py", "tasks/math/plots.py", "tasks/math/report.py"])


def test_a_name_a_package_only_exports_lazily_is_refused(tree):
    write(tree, {"tasks/math/__init__.py": "def __getattr__(name):\n    ...\n",
                 "tasks/math/plots.py": "from tasks.math import Solver\n"})
    with pytest.raises(DepsError, match="'Solver' is not bound in __init__.py of tasks.math"):
        stage_code_deps(tree, "toy", "evaluate")


def test_an_import_of_a_missing_repository_module_is_refused(tree):
    write(tree, {"tasks/math/plots.py": "from tasks.gone import thing\n"})
    with pytest.raises(DepsError, match="no module 'tasks.gone'"):
        stage_code_deps(tree, "toy", "evaluate")
