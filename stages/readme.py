"""Each paper's README shows its committed results as a table generated from data/<paper>/claims.json.

The table sits between two marker lines; `papers report --readme` rewrites it, and a test fails
when a README's table is not what the committed claims.json gives, so no README number can
drift from the results it quotes. The prose around it (what the numbers mean) stays hand-written.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

from tasks.core.claims import paper_results_markdown, read_claims_file

from .spec import papers

BEGIN = "<!-- results: generated from data/{paper}/claims.json by `papers report --readme`; edit the claims, not this -->"
END = "<!-- end of results -->"
HEADINGS = ("## What we measured", "## Results")  # the block goes under the first of these


def readme_path(root: Path, paper: str) -> Path:
    return root / "stages" / paper / "README.md"


def results_block(document: dict) -> str:
    dirty = " with uncommitted changes" if document.get("git_dirty") else ""
    lines = [BEGIN.format(paper=document["paper"]),
             f"Profile `{document['profile']}`, code at commit `{document['commit'][:10]}`{dirty}; "
             f"MLflow run `{document.get('mlflow_run_id', '-')}`.", "",
             *paper_results_markdown(document), END]
    return "\n".join(lines)


def with_block(text: str, paper: str, block: str) -> str:
    """`text` with its results block replaced, or inserted under the first results heading (else at the end)."""
    begin = BEGIN.format(paper=paper)
    if begin in text and END in text:
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(END)
        return head + block + tail
    lines = text.splitlines()
    at = next((i + 1 for i, line in enumerate(lines) if line.startswith(HEADINGS)), None)
    if at is None:
        return text.rstrip("\n") + f"\n\n## Results\n\n{block}\n"
    return "\n".join(lines[:at] + ["", block] + lines[at:]) + "\n"


def committed_claims(root: Path):
    """(paper, its claims.json document) for every paper with committed claims."""
    for paper in papers(root):
        path = root / "data" / paper / "claims.json"
        if path.exists():
            yield paper, read_claims_file(path)


def write_readmes(root: Path) -> list[Path]:
    """Rewrite the results block of every paper with claims, and the project README's paper table (its verdict
    counts); the READMEs that changed."""
    from .generate import readme as with_papers_table

    renders = {readme_path(root, paper): partial(with_block, paper=paper, block=results_block(document))
               for paper, document in committed_claims(root)}
    renders[root / "README.md"] = partial(with_papers_table, root)
    changed = []
    for path, render in renders.items():
        before = path.read_text()
        after = render(before)
        if after != before:
            path.write_text(after)
            changed.append(path)
    return changed


def stale_readmes(root: Path) -> list[str]:
    """One line per paper whose README does not show its claims.json as results_block renders it."""
    return [f"stages/{paper}/README.md does not show data/{paper}/claims.json (run `papers report --readme`)"
            for paper, document in committed_claims(root)
            if results_block(document) not in readme_path(root, paper).read_text()]
