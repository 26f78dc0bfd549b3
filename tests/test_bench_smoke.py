"""Smoke test of the benchmark: the whole of ``python -m lmspark.bench`` at a tiny scale.

One timed run, the Spark engines only (vanilla Spark and lmspark), into a temporary folder. It
checks that every output file exists and that the CSV has one row per dataset x query x engine x
run. It asserts no timings.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb", reason="benchmark dependencies: pip install -r python/requirements-bench.txt")
pytest.importorskip("matplotlib", reason="benchmark dependencies: pip install -r python/requirements-bench.txt")

import lmspark  # noqa: E402
from lmspark.bench import data, queries  # noqa: E402

SCALE = 0.01
ENGINES = ["vanilla", "lmspark"]


def test_bench_smoke(tmp_path: Path) -> None:
    jar = lmspark.jar_path()  # the packaged jar after `make jar`, or LMSPARK_JAR
    out = tmp_path / "results"
    env = dict(os.environ, LMSPARK_JAR=jar, PYSPARK_PYTHON=sys.executable)
    cmd = [sys.executable, "-m", "lmspark.bench", "--scale", str(SCALE), "--runs", "1",
           "--engines", *ENGINES, "--output", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    # A hang guard, not a timing check: generous, because CI machines can be heavily loaded.
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    assert p.returncode == 0, f"benchmark failed:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"

    csvs = list(out.glob("*-sf0.01-spark*.csv"))
    assert len(csvs) == 1, sorted(out.iterdir())
    stem = csvs[0].name[: -len(".csv")]
    for suffix in (".csv", ".md", "-ratios.png", "-selectivity.png"):
        f = out / f"{stem}{suffix}"
        assert f.is_file() and f.stat().st_size > 0, f"missing {f.name}"

    with open(csvs[0], newline="") as f:
        rows = list(csv.DictReader(f))
    cells = queries.plan(list(data.DATASETS), None, SCALE)
    expected = {(c.dataset, c.query, e, "0") for c in cells for e in ENGINES}
    got = [(r["dataset"], r["query"], r["engine"], r["run"]) for r in rows]
    assert len(got) == len(expected) == len(set(got))
    assert set(got) == expected
    bad = [r for r in rows if r["status"] != "ok" or not r["seconds"]]
    assert not bad, bad[:3]
    lm = [r for r in rows if r["engine"] == "lmspark"]
    assert all(r["lm_scan"] in ("true", "false") for r in lm)
    assert any(k.startswith("m_") for k in rows[0]), "no lmspark metric columns"
    assert any(r["m_numOutputRows"] for r in lm)

    md = (out / f"{stem}.md").read_text()
    assert "geometric mean" in md and "lmspark / vanilla" in md
    for c in cells:
        assert f"| {c.dataset} | {c.query} |" in md
