"""The README's Python example runs as written (four solves of the default data: slow)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT


def _python_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python and notebooks", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_example_is_at_most_ten_lines_of_code() -> None:
    lines = [line for line in _python_example().splitlines() if line.strip()]
    assert len(lines) <= 10, lines


@pytest.mark.slow
def test_the_readme_python_example_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    scope: dict[str, object] = {}
    exec(compile(_python_example(), "README.md", "exec"), scope)  # noqa: S102
    out = capsys.readouterr().out
    # the neutral plan of docs/guide/default-plan.md
    from tests.test_default_plan_regression import PINNED_OBJECTIVE_USD

    assert out.startswith(f"optimal {PINNED_OBJECTIVE_USD['neutral'] / 1e9:.1f} billion USD"), out
    assert {"optimistic", "neutral", "negative"} <= set(out.split())
    fig = scope["fig"]
    assert {t.name for t in fig.data} == {"n/a", "nvidia", "trainium"}  # type: ignore[attr-defined]
