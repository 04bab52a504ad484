"""`papers balora finetune --out` on a shared machine (tests/output_table.py)."""
from pathlib import Path

from tests.output_table import assert_planted_link_refused
from tests.platform.second_user import other  # noqa: F401


def saved_model(work: Path) -> None:
    (work / "lm").mkdir()
    (work / "lm" / "tiny_lm.json").write_text('{"symbols": ["a"], "config": {"d_model": 4, "context": 4}}')
    (work / "lm" / "model.safetensors").write_bytes(b"")


def test_a_planted_link_at_out_is_refused(tmp_path_factory, other):  # noqa: F811 - the fixture
    args = ("balora", "finetune", "--model", "lm", "--data", "d.txt", "--rank", "2")
    assert_planted_link_refused(tmp_path_factory, other, args, "balora", inputs=saved_model)
