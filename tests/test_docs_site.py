"""The documentation site builds with warnings as errors, and its code blocks run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest.importorskip("sphinx")

DOCS = ROOT / "docs"


def _build(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Build the site with the README's command (``-W``: a warning fails).

    In a process of its own: Sphinx 9's napoleon uses an autodoc interface Sphinx itself
    deprecates, which this suite's warning filter would turn into an error.
    """
    cmd = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(source), str(out)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)


def test_the_docs_site_builds_without_warnings(tmp_path: Path) -> None:
    done = _build(DOCS, tmp_path / "html")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "html" / "api.html").read_text(encoding="utf-8").count("statistics") > 5
    layout = (tmp_path / "html" / "layout.html").read_text(encoding="utf-8")
    assert "keys.py statistics.py plots.py plan.py" in layout  # the README's checked map


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build"))
    index = src / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\nSee [the guide](missing.md).\n")
    broken = _build(src, tmp_path / "html")
    assert broken.returncode != 0
    assert "missing.md" in broken.stderr


def test_every_python_block_of_the_docs_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    blocks = [
        (page.name, code)
        for page in sorted(DOCS.glob("*.md"))
        for code in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    ]
    assert blocks, "the docs hold at least the tutorial page's example"
    for name, code in blocks:
        exec(compile(code, str(name), "exec"), {})  # noqa: S102
