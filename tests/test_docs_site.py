"""The documentation site builds with warnings as errors (its code blocks run in
``tests/test_docs_code_blocks.py``)."""

from __future__ import annotations

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
    layout = (tmp_path / "html" / "guide" / "development.html").read_text(encoding="utf-8")
    assert "keys.py statistics.py plots.py plan.py" in layout  # the checked module map
    index = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    for page in sorted((DOCS / "guide").glob("*.md")):
        assert f"guide/{page.stem}.html" in index, f"docs/guide/{page.name} is not in the index"


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build"))
    index = src / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\nSee [the guide](missing.md).\n")
    broken = _build(src, tmp_path / "html")
    assert broken.returncode != 0
    assert "missing.md" in broken.stderr


def test_the_readme_gives_the_one_build_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "```bash\npython -m sphinx -W -b html docs docs/_build\n```" in readme
