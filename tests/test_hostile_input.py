"""Hostile-input suite (issue 16): every case runs in a subprocess under a memory and time cap.

Each case builds a malformed dataset, sweep or upload from ``tests/data/tiny_valid``,
runs the product on it the way a user would (``capacity validate``, ``capacity solve``,
``capacity batch``, or the app's upload function) in a child process limited to
:data:`MEMORY_CAP_BYTES` of address space and :data:`TIME_CAP_S` seconds, and asserts:

* exit status 1 (the input is refused, and nothing crashed: a crash is another code, a
  memory blow-up is killed by the cap, a hang by the timeout);
* no Python traceback in the output;
* a clear finding: the expected words of the message.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import TINY

MEMORY_CAP_BYTES = 3 * 1024**3
"""Address-space cap of each child (RLIMIT_AS, 3 GiB).

Importing the batch stack maps about 1.6 GB of address space (for under 200 MB
resident), so the cap leaves about 1.4 GB of headroom: the "billion laughs" YAML
(3.6 GB before the fix) and the understated zip member (2 GiB inflated in memory
before the fix) would both exceed it.
"""

TIME_CAP_S = 90.0
"""Wall-clock cap of each child."""

CLI = "from optimizer.cli.commands import main; main()"


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))


def run_capped(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -c <args[0]> args[1:]`` under the memory and time caps."""
    return subprocess.run(
        [sys.executable, "-c", *args],
        cwd=cwd,
        preexec_fn=_cap_memory,
        capture_output=True,
        text=True,
        timeout=TIME_CAP_S,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[1]), "COLUMNS": "200"},
    )


# -------------------------------------------------------------------------- builders
BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{x}: &{x} [{', '.join([f'*{p}'] * 9)}]"
            for p, x in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "scenarios: *i",
    ]
)


def _set_cell(d: Path, table: str, column: str, value: str, row: int = 0) -> None:
    p = d / f"{table}.csv"
    lines = p.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    cells = lines[row + 1].split(",")
    cells[header.index(column)] = value
    lines[row + 1] = ",".join(cells)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _scenario(d: Path, override: str) -> None:
    (d / "scenarios.yaml").write_text(
        "scenarios:\n  s:\n    overrides:\n" + textwrap.indent(override, "      "),
        encoding="utf-8",
    )


SCALE = "- {{op: scale, table: demand, column: demand_h100e, where: {where}, factor: {factor}}}\n"


@dataclass(frozen=True)
class Case:
    """One hostile input: how to build it, what to run, what the finding must say."""

    name: str
    build: Callable[[Path], None]
    expect: str
    command: str = "validate"


def _dup_rows(d: Path) -> None:
    lines = (d / "demand.csv").read_text().splitlines()
    (d / "demand.csv").write_text("\n".join(lines + [lines[1]] * 20_000) + "\n")


def _bytes(table: str, data: bytes) -> Callable[[Path], None]:
    return lambda d: (d / f"{table}.csv").write_bytes(data)


CASES = [
    Case(
        "demand 1e20", lambda d: _set_cell(d, "demand", "demand_h100e", "1e20"), "solver can take"
    ),
    Case(
        "demand 1e20 solve",
        lambda d: _set_cell(d, "demand", "demand_h100e", "1e20"),
        "solver can take",
        "solve",
    ),
    Case(
        "integer beyond 64 bits",
        lambda d: _set_cell(d, "chips", "lifetime_periods", "99999999999999999999"),
        "too large for a 64-bit integer",
    ),
    Case("inf cell", lambda d: _set_cell(d, "demand", "demand_h100e", "inf"), "not a number"),
    Case("nan cell", lambda d: _set_cell(d, "sites", "pue_air", "nan"), "not a number"),
    Case("negative MW", lambda d: _set_cell(d, "sites", "max_it_mw", "-5"), "cannot be negative"),
    Case(
        "where matches no row",
        lambda d: _scenario(d, SCALE.format(where="{customer: ACME}", factor="0.5")),
        "Did you mean 'acme'?",
    ),
    Case(
        "factor nan",
        lambda d: _scenario(d, SCALE.format(where="{customer: acme}", factor="nan")),
        "factor must be a finite number",
    ),
    Case(
        "factor 1e400",
        lambda d: _scenario(d, SCALE.format(where="{customer: acme}", factor="1e400")),
        "factor must be a finite number",
    ),
    Case(
        "shift by 10^20 quarters",
        lambda d: _scenario(
            d,
            "- {op: shift, table: site_grid, column: grid_mw, where: {site: dc-1}, "
            "periods: 99999999999999999999}\n",
        ),
        "periods must be within",
    ),
    Case("alias bomb scenarios.yaml", lambda d: (d / "scenarios.yaml").write_text(BOMB), "expand"),
    Case("alias bomb dataset.yaml", lambda d: (d / "dataset.yaml").write_text(BOMB), "expand"),
    Case(
        "recursive alias",
        lambda d: (d / "scenarios.yaml").write_text("scenarios: &a {s: *a}\n"),
        "recursive",
    ),
    Case(
        "deep nesting",
        lambda d: (d / "scenarios.yaml").write_text("scenarios: " + "[" * 100_000),
        "too deeply",
    ),
    Case("20k duplicate rows", _dup_rows, "more finding(s) not shown"),
    Case("not UTF-8", _bytes("workloads", b"workload,power_factor\n\x81\x8d,0.5\n"), "cannot read"),
    Case("binary garbage", _bytes("sites", bytes(range(256)) * 64), "sites.csv"),
    Case("empty file", _bytes("demand", b""), "the file is empty: write the header row"),
    Case(
        "header only",
        _bytes("periods", b"period,hours,discount_factor\n"),
        "the horizon has no periods",
    ),
    Case("sweep alias bomb", lambda d: (d / "sweep.yaml").write_text(BOMB), "expand", "batch"),
    Case(
        "sweep deep nesting",
        lambda d: (d / "sweep.yaml").write_text("data: " + "{a: " * 50_000),
        "too deeply",
        "batch",
    ),
    Case(
        "sweep not UTF-8",
        lambda d: (d / "sweep.yaml").write_bytes(b"data: \xff\n"),
        "not UTF-8",
        "batch",
    ),
]


def _argv(case: Case, d: Path) -> list[str]:
    if case.command == "batch":
        return [CLI, "batch", str(d / "sweep.yaml"), "--out", str(d / "out")]
    if case.command == "solve":
        return [CLI, "solve", str(d), "--no-report"]
    return [CLI, "validate", str(d), "--scenario", "all"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hostile_input_is_refused_clearly(case: Case, tmp_path: Path) -> None:
    d = tmp_path / "data"
    shutil.copytree(TINY, d)
    case.build(d)
    res = run_capped(_argv(case, d), tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    assert case.expect in " ".join(out.split()), out[-3000:]


# ------------------------------------------------------------------------ app uploads
UPLOAD = """
import io, pathlib, struct, sys, zipfile
from ui.upload import UploadedFile, UploadError, dataset_from_upload

def understated(actual, declared=1000):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("demand.csv", "w", force_zip64=True) as member:
            chunk = b"0" * (1 << 20)
            for _ in range(actual // len(chunk)):
                member.write(chunk)
            member.write(b"0" * (actual % len(chunk)))
        zf.writestr("scenarios.yaml", YAML)
        for p in sorted(pathlib.Path(sys.argv[3]).glob("*.csv")):  # every other table, so
            if p.name != "demand.csv":  # the zip is complete and its YAML is read
                zf.write(p, p.name)
    data = bytearray(buf.getvalue())
    if actual > 10:
        struct.pack_into("<I", data, data.find(b"PK\\x03\\x04") + 22, declared)
        struct.pack_into("<I", data, data.find(b"PK\\x01\\x02") + 24, declared)
    return bytes(data)

YAML = sys.argv[2].encode()
blob = understated(int(sys.argv[1]))
try:
    dataset_from_upload([UploadedFile("upload.zip", blob)], None)
except UploadError as e:
    print("refused:", e); sys.exit(1)
except Exception as e:
    from capacity.validation import DataValidationError
    if isinstance(e, DataValidationError):
        print("refused:", e); sys.exit(1)
    raise
print("accepted"); sys.exit(0)
"""


@pytest.mark.parametrize(
    ("actual", "yaml", "expect"),
    [
        (2 * 1024**3, "", "upload.zip"),  # 2 GiB member declared as 1000 bytes
        (1, BOMB, "expand"),  # billion laughs inside the uploaded zip
    ],
    ids=["zip bomb", "yaml bomb in a zip"],
)
def test_hostile_upload_is_refused_within_the_caps(
    actual: int, yaml: str, expect: str, tmp_path: Path
) -> None:
    res = run_capped([UPLOAD, str(actual), yaml, str(TINY)], tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out[-3000:]
    assert "Traceback" not in out
    assert expect in out
