"""Smoke test of the benchmark: the whole of ``python -m lmspark.bench`` at a tiny scale.

One timed run, the Spark engines only (vanilla Spark and lmspark), into a temporary folder. It
checks that every output file exists and that the CSV has one row per dataset x query x engine x
run. It asserts no timings.

``test_orders_nested`` checks the nested data set (its layout against the flat TPC-H tables it is
made from) and that every nested query answers the same on vanilla Spark, lmspark and DuckDB (with
DuckDB's own text where ``queries.ENGINE_SQL`` gives one).
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

from conftest import LM_CONF, REFERENCE_CONF, conf  # noqa: E402

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
    cells = queries.plan(list(data.DEFAULT_DATASETS), None, SCALE)
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


def test_extra_queries_run_only_by_exact_name() -> None:
    """Queries outside the benchmark's set never enter it by default or through a glob."""
    default = {c.query for c in queries.plan(["lineitem_default"], None, SCALE)}
    globbed = {c.query for c in queries.plan(["lineitem_default"], ["topn_*"], SCALE)}
    named = {c.query for c in queries.plan(["lineitem_default"], ["topn_key", "topn_star"], SCALE)}
    assert "topn_key" not in default and "topn_key" not in globbed and "topn_star" in globbed
    assert named == {"topn_key", "topn_star"}


NESTED_SCALE = 0.1  # 150,000 orders: every nested query returns rows


def _canon(v):
    """A Spark Row / DuckDB dict / list value as nested tuples of (field, value) pairs."""
    if hasattr(v, "asDict"):
        v = v.asDict()
    if isinstance(v, dict):
        return tuple((k, _canon(x)) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return tuple(_canon(x) for x in v)
    return v


def test_orders_nested(spark, tmp_path: Path, monkeypatch) -> None:
    import duckdb
    import pyarrow.parquet as pq

    monkeypatch.setattr(data, "lineitem_parts", lambda scale: 2)  # the per-part path, as at SF > 1
    # Asked before the flat set it is made from: the flat set is still made first.
    sets = data.ensure_datasets(["orders_nested", "lineitem_default"], NESTED_SCALE, tmp_path / "cache",
                                log=lambda m: None)
    assert list(sets) == ["orders_nested", "lineitem_default"]
    ds = sets["orders_nested"]
    flat = tmp_path / "cache" / f"sf{data.scale_tag(NESTED_SCALE)}" / "lineitem_default"
    files = sorted(ds.path.glob("*.parquet"))
    assert len(files) == 2
    f0 = pq.ParquetFile(files[0])
    assert f0.schema_arrow.names[-2:] == ["customer", "lineitems"]
    assert [f.name for f in f0.schema_arrow.field("customer").type] == list(data.CUSTOMER_FIELDS)
    assert [f.name for f in f0.schema_arrow.field("lineitems").type.value_type] == list(data.LINEITEM_FIELDS)
    assert all(f0.metadata.row_group(0).column(j).has_offset_index for j in range(f0.metadata.num_columns))

    con = duckdb.connect()
    con.execute(f"CREATE VIEW orders_nested AS SELECT * FROM read_parquet('{ds.path}/*.parquet')")
    items = ", ".join(f"li.{c}" for c in data.LINEITEM_FIELDS)
    flat_cols = ", ".join(data.LINEITEM_FIELDS)
    (orders, lines, unordered, wrong_customer), = con.execute(f"""
        SELECT count(*), sum(len(lineitems)),
               count(*) FILTER (WHERE o_orderkey <= prev),
               count(*) FILTER (WHERE customer.c_custkey <> o_custkey)
        FROM (SELECT *, lag(o_orderkey) OVER (ORDER BY filename, file_row_number) AS prev
              FROM read_parquet('{ds.path}/*.parquet', filename=true, file_row_number=true))""").fetchall()
    assert orders == int(1_500_000 * NESTED_SCALE)
    assert (unordered, wrong_customer) == (0, 0)
    (missing,), = con.execute(f"""
        SELECT count(*) FROM (
            (SELECT l_orderkey, {flat_cols} FROM read_parquet('{flat}/*.parquet'))
            EXCEPT ALL
            (SELECT o_orderkey, {items} FROM (SELECT o_orderkey, unnest(lineitems) AS li FROM orders_nested)))""").fetchall()
    (flat_lines,), = con.execute(f"SELECT count(*) FROM read_parquet('{flat}/*.parquet')").fetchall()
    assert missing == 0 and lines == flat_lines

    spark.read.parquet(str(ds.path)).createOrReplaceTempView("orders_nested")
    for cell in queries.plan(["orders_nested"], None, NESTED_SCALE):
        with conf(spark, REFERENCE_CONF):
            vanilla = sorted(repr(_canon(r)) for r in spark.sql(cell.sql).collect())
        with conf(spark, LM_CONF):
            lm = sorted(repr(_canon(r)) for r in spark.sql(cell.sql).collect())
        duck = sorted(repr(_canon(r)) for r in con.sql(cell.sql_for("duckdb")).to_arrow_table().to_pylist())
        assert vanilla, f"{cell.query}: no rows at SF {NESTED_SCALE}"
        assert lm == vanilla, f"{cell.query}: lmspark differs from vanilla Spark"
        assert duck == vanilla, f"{cell.query}: DuckDB differs from vanilla Spark"
