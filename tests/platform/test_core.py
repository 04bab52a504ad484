"""tasks.core: atomic outputs, hashing, seeds, claims, flattening of params."""
import json
import subprocess

import pytest

from tasks.core.claims import Claim, Gate, Interval, claims_document, claims_markdown, not_run, on_interval
from tests.conftest import CLAIM_FIELDS
from tasks.core.io import atomic_outputs, path_md5
from tasks.core.seeding import derive_seed
from tasks.core.tracking import flatten


def test_atomic_outputs_move_into_place_only_on_success(tmp_path):
    folder, single = tmp_path / "out" / "dir", tmp_path / "out" / "file.json"
    single.parent.mkdir()
    single.write_text("old")
    with atomic_outputs([folder, single]) as staged:
        staged[folder].mkdir()
        (staged[folder] / "a.txt").write_text("a")
        staged[single].write_text("new")
        assert single.read_text() == "old"
    assert (folder / "a.txt").read_text() == "a" and single.read_text() == "new"
    assert sorted(p.name for p in single.parent.iterdir()) == ["dir", "file.json"]


def test_atomic_outputs_leave_nothing_on_failure(tmp_path):
    target = tmp_path / "result.json"
    with pytest.raises(RuntimeError):
        with atomic_outputs([target]) as staged:
            staged[target].write_text("half")
            raise RuntimeError("stage failed")
    assert list(tmp_path.iterdir()) == []


def test_atomic_outputs_refuse_a_missing_declared_output(tmp_path):
    with pytest.raises(FileNotFoundError, match="did not write its declared output"):
        with atomic_outputs([tmp_path / "a", tmp_path / "b"]) as staged:
            staged[tmp_path / "a"].write_text("only a")
    assert list(tmp_path.iterdir()) == []


def test_folder_hash_changes_with_content_and_not_with_order(tmp_path):
    (tmp_path / "x").write_text("1")
    (tmp_path / "y").write_text("2")
    first = path_md5(tmp_path)
    assert first.endswith(".dir") and path_md5(tmp_path) == first
    (tmp_path / "y").write_text("3")
    assert path_md5(tmp_path) != first


def test_derived_seeds_are_stable_and_distinct():
    assert derive_seed(0, "geometric", 0.1, 3) == derive_seed(0, "geometric", 0.1, 3)
    assert len({derive_seed(0, "geometric", 0.1, k) for k in range(100)}) == 100


def test_flatten_nests_keys_with_dots():
    assert flatten({"a": {"b": [1, 2], "c": {"d": 1.5}}, "e": True}) == {"a.b": "[1, 2]", "a.c.d": "1.5", "e": "True"}


def test_claims_document_and_markdown():
    interval = Interval(0.91, 1.02, 10, "paired bootstrap over 10 seeds")
    claims = [Claim("C1", "x <= y", "better", 0.98, 1.05, on_interval(interval, Gate(high=1.05))),
              Claim("C2", "z", "faster", None, 1.0, not_run("the profile lacks it"))]
    document = claims_document("paper", "smoke", "abc", claims)
    assert set(document["claims"][0]) == CLAIM_FIELDS
    assert document["claims"][0]["interval"] == {"low": 0.91, "high": 1.02, "n": 10, "level": 0.95,
                                                 "method": "paired bootstrap over 10 seeds"}
    assert (document["claims"][0]["passed"], document["claims"][1]["verdict"]) == (True, "undecided")
    text = claims_markdown([json.loads(json.dumps(document))])
    assert "| paper | smoke | C1 | x <= y | better | 0.98 [0.91, 1.02] | 1.05 | pass |" in text
    assert "| undecided |" in text


def test_what_a_run_rewrites_does_not_make_the_tree_dirty(tmp_path):
    from tasks.core.provenance import git_dirty

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    for name in ("README.md", "stages/p/README.md", "stages/p/dvc.lock", "data/p/claims.json", "reports/claims.md",
                 "flows/p/pipeline.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("v1\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    for name in ("README.md", "stages/p/README.md", "stages/p/dvc.lock", "data/p/claims.json", "reports/claims.md"):
        (tmp_path / name).write_text("v2\n")
    assert not git_dirty(tmp_path)
    (tmp_path / "flows" / "p" / "pipeline.py").write_text("v2\n")
    assert git_dirty(tmp_path)
