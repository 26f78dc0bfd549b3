"""lmspark demo: TPC-H lineitem (SF1) queried with lmspark on and off.

Run with ``python -m lmspark.demo`` (``make demo``). The first run generates lineitem with
``tpchgen-cli`` into a cache folder (``$LMSPARK_CACHE``, else ``.cache/demo/`` under the repository
root, else ``~/.cache/lmspark/demo``); later runs reuse it.

Each query runs once as warm-up and then ``--runs`` times with lmspark on and off, alternating;
"off" is vanilla Spark with its defaults (only ``spark.lmspark.enabled=false``). The table shows
the medians, the ratio vanilla/lmspark (> 1 means lmspark is faster), whether the results are
equal, and whether the lmspark plan really used ``LmParquetScan`` or fell back (with the reason).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Callable

ENABLED = "spark.lmspark.enabled"
LM_NODE = "LmParquetScan"


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def _repo_root() -> Path | None:
    root = Path(__file__).resolve().parents[2]
    return root if (root / "Makefile").is_file() and (root / "python" / "lmspark").is_dir() else None


def cache_dir() -> Path:
    env = os.environ.get("LMSPARK_CACHE")
    if env:
        return Path(env)
    root = _repo_root()
    if root is not None:
        return root / ".cache" / "demo"
    return Path.home() / ".cache" / "lmspark" / "demo"


def _tpchgen() -> str:
    beside = Path(sys.executable).parent / "tpchgen-cli"
    if beside.is_file():
        return str(beside)
    found = shutil.which("tpchgen-cli")
    if found:
        return found
    raise SystemExit("tpchgen-cli not found: pip install tpchgen-cli (it is in python/requirements-dev.txt)")


def ensure_lineitem(scale: int, parts: int) -> Path:
    """The lineitem folder at this scale, generated once (atomically: a half-written folder is
    never reused)."""
    base = cache_dir()
    target = base / f"tpch-sf{scale}-p{parts}" / "lineitem"
    if target.is_dir() and any(target.glob("*.parquet")):
        return target
    base.mkdir(parents=True, exist_ok=True)
    print(f"generating TPC-H lineitem SF{scale} into {target} (once) ...", flush=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=base, prefix="gen-") as tmp:
        cmd = [
            _tpchgen(), "parquet", "-s", str(scale), "--tables", "lineitem", "--parts", str(parts),
            "--output-dir", tmp, "--no-progress", "--quiet",
        ]
        subprocess.run(cmd, check=True)
        produced = Path(tmp) / "lineitem"
        if not produced.is_dir():  # older tpchgen-cli versions write <tmp>/lineitem.parquet
            produced = Path(tmp)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.parent / "lineitem.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.move(str(produced), str(staging))
        staging.rename(target)
    size = sum(f.stat().st_size for f in target.glob("*.parquet")) / 2**20
    print(f"  done in {time.perf_counter() - t0:.1f}s, {size:.0f} MiB", flush=True)
    return target


# --------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------


@dataclass
class Query:
    name: str
    sql: str
    #: "collect": a small result, collected and compared row by row;
    #: "noop": the full result written to the noop sink, compared through a checksum query.
    sink: str = "collect"


Q1 = """
SELECT l_returnflag, l_linestatus,
       sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc,
       count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= date '1998-12-01' - interval '90' day
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
"""

Q6 = """
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01'
  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24
"""

QUERIES = [
    Query("TPC-H Q1", Q1),
    Query("TPC-H Q6", Q6),
    Query(
        "count, selective filter",
        "SELECT count(*) FROM lineitem WHERE l_shipdate = date '1995-03-15' AND l_shipmode = 'AIR'",
    ),
    Query(
        "group by, no decimals",
        "SELECT l_shipmode, count(*), max(l_comment), min(l_receiptdate), sum(l_linenumber) "
        "FROM lineitem GROUP BY l_shipmode",
    ),
    Query(
        "select * of one month",
        "SELECT * FROM lineitem WHERE l_shipdate >= date '1995-03-01' AND l_shipdate < date '1995-04-01'",
        sink="noop",
    ),
    Query("projection, 4 columns", "SELECT l_orderkey, l_shipdate, l_shipmode, l_comment FROM lineitem", sink="noop"),
]


def _checksum_sql(sql: str) -> str:
    """An order-independent fingerprint of a full result: count, sum and xor of row hashes."""
    return (
        "SELECT count(*) AS n, sum(h % 1000000007) AS s, bit_xor(h) AS x "
        f"FROM (SELECT xxhash64(*) AS h FROM ({sql}))"
    )


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


def _norm(v):
    if isinstance(v, float):
        return ("nan",) if math.isnan(v) else repr(v)
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, (list, tuple)):
        return tuple(_norm(x) for x in v)
    return v


def _rows(rows) -> list:
    return sorted((_norm(tuple(r)) for r in rows), key=repr)


def plan_status(df) -> str:
    """LmParquetScan, or why lmspark did not serve the query (``lmspark.explain``)."""
    from . import explain

    e = explain(df)
    if not e.active:
        return f"lmspark inactive: {e.inactive_reason}"
    if e.served:
        return LM_NODE + (f" (+ fallback elsewhere: {'; '.join(e.reasons)})" if e.reasons else "")
    if e.reasons:
        return "fallback: " + "; ".join(e.reasons)
    return "Spark scan, no lmspark mark"


@dataclass
class Result:
    query: Query
    vanilla: list[float] = field(default_factory=list)
    lm: list[float] = field(default_factory=list)
    equal: bool | None = None
    status: str = ""
    error: str = ""


def _set_lm(spark, on: bool) -> None:
    spark.conf.set(ENABLED, "true" if on else "false")


def _run_once(spark, q: Query, on: bool) -> tuple[float, object]:
    _set_lm(spark, on)
    t0 = time.perf_counter()
    df = spark.sql(q.sql)
    if q.sink == "noop":
        df.write.format("noop").mode("overwrite").save()
        out = None
    else:
        out = df.collect()
    elapsed = time.perf_counter() - t0
    return elapsed, (df, out)


def run_query(spark, q: Query, runs: int, warmup: int) -> Result:
    res = Result(q)
    try:
        # Warm-up (at least one run each), and the status of the lmspark plan (the final plan,
        # after running).
        for _ in range(max(warmup, 1)):
            _, (df_lm, lm_out) = _run_once(spark, q, True)
            # While lmspark is still on: for a noop write, this plans the query itself (the write
            # ran under a command of its own), with the same scan decision.
            res.status = plan_status(df_lm)
            _, (_, vanilla_out) = _run_once(spark, q, False)

        # Same results, on and off: small results directly, full results through a checksum.
        if q.sink == "collect":
            res.equal = _rows(lm_out) == _rows(vanilla_out)
        else:
            _set_lm(spark, True)
            lm_rows = _rows(spark.sql(_checksum_sql(q.sql)).collect())
            _set_lm(spark, False)
            vanilla_rows = _rows(spark.sql(_checksum_sql(q.sql)).collect())
            res.equal = lm_rows == vanilla_rows

        # Timed runs, alternating so that drift hits both sides alike.
        for i in range(runs):
            order = (True, False) if i % 2 == 0 else (False, True)
            for on in order:
                elapsed, _ = _run_once(spark, q, on)
                (res.lm if on else res.vanilla).append(elapsed)
    except Exception as e:  # noqa: BLE001 - show it in the table, keep going
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        res.error = (lines[0] if lines else type(e).__name__)[:200]
    finally:
        _set_lm(spark, True)
    return res


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def print_table(results: list[Result], runs: int) -> None:
    headers = ["query", "vanilla median (s)", "lmspark median (s)", "ratio", "results", "lmspark scan"]
    rows = []
    for r in results:
        v = statistics.median(r.vanilla) if r.vanilla else None
        lm = statistics.median(r.lm) if r.lm else None
        ratio = f"{v / lm:.2f}x" if v and lm else "-"
        equal = "ERROR: " + r.error if r.error else ("equal" if r.equal else "DIFFERENT")
        rows.append([r.query.name, _fmt(v), _fmt(lm), ratio, equal, r.status or "-"])
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    widths[-1] = len(headers[-1])  # the last column is free text
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    print()
    print(f"lmspark demo: medians of {runs} runs after warm-up; ratio = vanilla / lmspark (> 1: lmspark faster)")
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    print()


def build_session(driver_memory: str):
    from pyspark.sql import SparkSession

    from lmspark import enable_lm

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lmspark-demo")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
    )
    spark = enable_lm(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lmspark.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=1, help="TPC-H scale factor (default 1)")
    ap.add_argument("--parts", type=int, default=4, help="lineitem files (default 4)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per query and setting (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="warm-up runs per query and setting (default 1, at least 1)")
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--only", default="", help="run only queries whose name contains this text")
    args = ap.parse_args(argv)

    try:
        from lmspark import jar_path

        jar = jar_path()
    except FileNotFoundError as e:
        print(f"lmspark demo: {e}", file=sys.stderr)
        return 2

    data = ensure_lineitem(args.scale, args.parts)
    print(f"lineitem: {data}\nlmspark jar: {jar}", flush=True)
    spark = build_session(args.driver_memory)
    try:
        spark.read.parquet(str(data)).createOrReplaceTempView("lineitem")
        results = []
        for q in QUERIES:
            if args.only and args.only.lower() not in q.name.lower():
                continue
            t0 = time.perf_counter()
            r = run_query(spark, q, args.runs, args.warmup)
            results.append(r)
            verdict = "error" if r.error else ("equal" if r.equal else "DIFFERENT")
            print(f"  {q.name}: {verdict}, {r.status or '-'} ({time.perf_counter() - t0:.0f}s)", flush=True)
        print_table(results, args.runs)
    finally:
        spark.stop()
    ok = all(r.equal and not r.error for r in results)
    if not ok:
        print("some queries failed or gave different results on and off", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
