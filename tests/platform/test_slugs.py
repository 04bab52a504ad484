"""A paper lives in its own places, and no hand-written shared file names it (issue 36): the shared code and docs
know papers only by discovery. A paper's slug is a folder of stages/*/params.yaml; the scan is `git grep -w` of
each slug over the tracked files, less the papers' own places and the files generated from their declarations."""
from __future__ import annotations

import re
import subprocess
from fnmatch import fnmatchcase

from tests.conftest import ROOT

# Where the paper's method is a library building block named as the paper names it: the NCRS search, the LiMuon and
# SoftSignum optimizers, the ZOVH estimator (their slugs are the methods' names, not references to the papers).
METHOD_NAMES = ("tasks/comparison/random_search.py", "tasks/optim/__init__.py", "tasks/optim/registry.py",
                "tasks/optim/limuon.py", "tasks/zeroth/*.py")
SELF = "tests/platform/test_slugs.py"  # it lists the method modules above by path
DERIVED = ("README.md", "dvc.yaml", "dvc.lock", "prefect.yaml", "reports/claims.md", "reports/index.html",
           "benchmarks/results/*", "stages/*/dvc.yaml", "stages/*/dvc.lock")
OWN = ("flows/{}/*", "stages/{}/*", "data/{}/*", "tests/papers/{}/*", "tests/integration/test_{}_pipeline.py",
       "benchmarks/{}*.py")


def slugs() -> list[str]:
    return sorted(path.parent.name for path in (ROOT / "stages").glob("*/params.yaml"))


def hand_written_shared(path: str, papers: list[str]) -> bool:
    own = (pattern.format(paper) for pattern in OWN for paper in papers)
    return not any(fnmatchcase(path, pattern) for pattern in (*DERIVED, *METHOD_NAMES, SELF, *own))


def named_papers(text: str, papers: list[str]) -> list[str]:
    """The slugs in `text` as whole words, as `git grep -w` finds them (a word is letters, digits and `_`)."""
    word = re.compile(rf"(?<![A-Za-z0-9_])({'|'.join(map(re.escape, papers))})(?![A-Za-z0-9_])")
    return sorted(set(word.findall(text)))


def test_the_scan_finds_whole_words_only():
    papers = ["pose_sync", "rs"]
    assert named_papers("see pose_sync (or `rs`); data/pose_sync/x", papers) == ["pose_sync", "rs"]
    assert named_papers("pose_sync_speed.py, rs2, Rs, pose-sync", papers) == []
    assert not hand_written_shared("flows/rs/cli.py", papers) and not hand_written_shared("benchmarks/rs_x.py", papers)
    assert hand_written_shared("tests/papers/test_x.py", papers) and hand_written_shared("docs/rs.md", papers)


def test_no_hand_written_shared_file_names_a_paper():
    papers = slugs()
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    found = {}
    for path in tracked.split("\0"):
        file = ROOT / path
        if not path or not hand_written_shared(path, papers) or not file.is_file():
            continue  # a deletion not yet committed is no longer there to name anyone
        content = file.read_bytes()
        if b"\0" in content[:8000]:  # binary, as git grep sees it
            continue
        if names := named_papers(content.decode(errors="replace"), papers):
            found[path] = names
    assert not found, "hand-written shared files that name a paper:\n" + "\n".join(
        f"  {path}: {', '.join(names)}" for path, names in found.items())
