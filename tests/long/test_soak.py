"""Soak: the benchmark's lineitem queries 1,000 times in one session, lmspark on and off in turn.

Not part of ``make test`` (``pytest.ini`` ignores ``tests/long``); ``make test-soak`` (and so
``make test-long``) runs it. Data: TPC-H lineitem at SF 0.1 (``LMSPARK_SOAK_SCALE``), both the
default and the sorted layout, from the benchmark's own generator (``lmspark.bench.data``, cached
under ``.cache/bench`` or ``$LMSPARK_CACHE/bench``). Queries: every query of
``lmspark.bench.queries.LINEITEM_QUERIES`` on both layouts (24 cells).

One session (``local[2]``, 2 GiB heap; Spark's UI stores capped at 50 executions / 100 jobs and
stages, so that Spark's own retained history stops growing early). Query ``i`` (0..N-1, N =
``LMSPARK_SOAK_QUERIES``, 1,000 by default) is cell ``(i // 2) mod 24`` with ``spark.lmspark.enabled``
= ``i`` even: so every cell runs with and without lmspark, alternately. Each cell's reference
(lmspark off, Parquet filter pushdown off) is computed once, first; every one of the N answers must
equal it exactly. Answers of more than 20,000 rows (``full_star``) are compared as an exact
fingerprint computed in Spark: row count, the sum of ``xxhash64`` over all columns (as a decimal,
so no overflow) and the sum of ``hash`` over all columns.

After each hundred queries: ``gc.collect()`` in Python (drops py4j references), then
``System.gc()`` in the JVM (local mode: driver and executor are one JVM) three times with short
pauses, then a record of: heap used (``MemoryMXBean``), non-heap used (metaspace, code cache),
the ``direct`` and ``mapped`` buffer pools (``BufferPoolMXBean``), the JVM's VmRSS
(``/proc/<pid>/status``) and the JVM's open file descriptors that point at a data file of the run
(``/proc/<pid>/fd``).

The rules, with ``second`` = the figures after the second hundred (the first hundred warms up
caches: code generation, class loading) and ``last`` = after the last hundred:

- heap used after GC: ``last <= second + max(64 MiB, 20% of second)``;
- direct + mapped buffers: ``last <= second + max(64 MiB, 20% of second)``;
- non-heap used: ``last <= second + max(64 MiB, 20% of second)``;
- no file descriptor on a data file is open after any hundred.

A leak of 100 KB per query (80 MB over the last 800 queries) breaks the heap rule; smaller leaks
show in the table's trend (printed, and written to ``target/soak.md`` with the wall time).
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from conftest import (
    ENABLED_KEY,
    LM_NODE,
    REFERENCE_CONF,
    REPO_ROOT,
    _comparable_df,
    describe_difference,
    executed_plan,
    lm_status,
    normalise,
)
from lmspark import enable_lm
from lmspark.bench import data as bench_data
from lmspark.bench import queries as bench_queries

SCALE = float(os.environ.get("LMSPARK_SOAK_SCALE", "0.1"))
QUERIES = int(os.environ.get("LMSPARK_SOAK_QUERIES", "1000"))
EVERY = 100
FINGERPRINT_ABOVE = 20_000
MIB = 1024 * 1024
DATASETS = ["lineitem_default", "lineitem_sorted"]


@pytest.fixture(scope="module")
def soak_session():
    warehouse = tempfile.mkdtemp(prefix="lmspark-soak-warehouse-")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lmspark-soak")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.sql.warehouse.dir", warehouse)
        # Spark's own history (kept for the UI / REST API) would grow for 1,000 executions
        .config("spark.sql.ui.retainedExecutions", "50")
        .config("spark.ui.retainedJobs", "100")
        .config("spark.ui.retainedStages", "100")
        .config("spark.ui.retainedTasks", "1000")
    )
    session = enable_lm(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    shutil.rmtree(warehouse, ignore_errors=True)


class Jvm:
    """Memory and file-descriptor figures of the (local-mode) JVM."""

    def __init__(self, spark: SparkSession):
        self.jvm = spark._jvm
        self.pid = int(self.jvm.java.lang.ProcessHandle.current().pid())

    def gc(self) -> None:
        gc.collect()
        for _ in range(3):
            self.jvm.java.lang.System.gc()
            time.sleep(0.3)

    def figures(self, data_roots: list[Path]) -> dict:
        mf = self.jvm.java.lang.management.ManagementFactory
        mem = mf.getMemoryMXBean()
        pools = {}
        for bean in mf.getPlatformMXBeans(self.jvm.java.lang.management.BufferPoolMXBean._java_lang_class):
            pools[str(bean.getName())] = int(bean.getMemoryUsed())
        rss = 0
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
        roots = [str(r.resolve()) for r in data_roots]
        open_data, total = [], 0
        fd_dir = Path(f"/proc/{self.pid}/fd")
        for fd in fd_dir.iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue  # closed meanwhile
            total += 1
            if any(target.startswith(r) for r in roots):
                open_data.append(target)
        return {
            "heap": int(mem.getHeapMemoryUsage().getUsed()),
            "nonheap": int(mem.getNonHeapMemoryUsage().getUsed()),
            "direct": pools.get("direct", 0),
            "mapped": pools.get("mapped", 0),
            "rss": rss,
            "fds": total,
            "data_fds": open_data,
        }


def _run(spark: SparkSession, sql: str, fingerprint: bool) -> tuple[Counter, str]:
    """The answer (a multiset of rows, or the fingerprint's one row) and the executed plan."""
    if fingerprint:
        sql = (f"SELECT count(*) AS n, sum(CAST(xxhash64(*) AS DECIMAL(38,0))) AS h1, "
               f"sum(CAST(hash(*) AS BIGINT)) AS h2 FROM ({sql}) q")
    df = _comparable_df(spark.sql(sql))
    return Counter(normalise(tuple(r)) for r in df.collect()), executed_plan(df)


def _table(records: list[dict]) -> str:
    head = ("| queries | heap used (MiB) | non-heap (MiB) | direct (MiB) | mapped (MiB) | RSS (MiB) "
            "| open fds | open data-file fds |")
    lines = [head, "|" + "---:|" * 8]
    for r in records:
        lines.append(
            f"| {r['queries']} | {r['heap'] / MIB:.1f} | {r['nonheap'] / MIB:.1f} | {r['direct'] / MIB:.2f} "
            f"| {r['mapped'] / MIB:.2f} | {r['rss'] / MIB:.0f} | {r['fds']} | {len(r['data_fds'])} |"
        )
    return "\n".join(lines)


def _margin(base: int) -> int:
    return max(64 * MIB, int(0.2 * base))


def test_soak(soak_session: SparkSession) -> None:
    spark = soak_session
    t_start = time.perf_counter()
    sets = bench_data.ensure_datasets(DATASETS, SCALE, bench_data.default_cache_dir())
    cells = [c for c in bench_queries.plan(DATASETS, None, SCALE)]
    assert len(cells) == 2 * len(bench_queries.LINEITEM_QUERIES)
    views = {}
    for name, ds in sets.items():
        views[name] = spark.read.parquet(str(ds.path))

    def use(dataset: str) -> None:
        views[dataset].createOrReplaceTempView("lineitem")

    # the references, once per cell
    refs: dict[tuple[str, str], Counter] = {}
    fingerprinted: set[tuple[str, str]] = set()
    for k, v in REFERENCE_CONF.items():
        spark.conf.set(k, v)
    for c in cells:
        use(c.dataset)
        n = spark.sql(f"SELECT count(*) FROM ({c.sql}) q").collect()[0][0]
        fp = n > FINGERPRINT_ABOVE
        if fp:
            fingerprinted.add((c.dataset, c.query))
        refs[(c.dataset, c.query)], plan = _run(spark, c.sql, fp)
        assert LM_NODE not in plan, f"the reference run used lmspark:\n{plan}"
    spark.conf.unset("spark.sql.parquet.filterPushdown")
    t_refs = time.perf_counter()

    jvm = Jvm(spark)
    data_roots = [ds.path for ds in sets.values()]
    records = []
    failures: list[str] = []
    lm_runs = 0
    for i in range(QUERIES):
        c = cells[(i // 2) % len(cells)]
        on = i % 2 == 0
        lm_runs += on
        spark.conf.set(ENABLED_KEY, "true" if on else "false")
        use(c.dataset)
        key = (c.dataset, c.query)
        got, plan = _run(spark, c.sql, key in fingerprinted)
        if (LM_NODE in plan) != on:
            failures.append(f"query {i}: {c.dataset}/{c.query} lmspark={on} but the plan shows {lm_status(plan)}")
        if got != refs[key]:
            failures.append(f"query {i}: {c.dataset}/{c.query} lmspark={on}\n" + describe_difference(got, refs[key]))
        if (i + 1) % EVERY == 0 or i + 1 == QUERIES:
            jvm.gc()
            rec = jvm.figures(data_roots)
            rec["queries"] = i + 1
            records.append(rec)
            print(f"after {i + 1} queries: " + ", ".join(
                f"{k}={v / MIB:.1f}MiB" if k in ("heap", "nonheap", "direct", "mapped", "rss") else f"{k}={v}"
                for k, v in rec.items() if k != "data_fds") + f", data_fds={len(rec['data_fds'])}", flush=True)
    spark.conf.unset(ENABLED_KEY)
    t_end = time.perf_counter()

    table = _table(records)
    second, last = records[min(1, len(records) - 1)], records[-1]
    slope = ((last["heap"] - second["heap"]) / max(1, last["queries"] - second["queries"])) if len(records) > 2 else 0
    summary = (
        f"Soak (`make test-soak`): {QUERIES} queries ({lm_runs} with lmspark, {QUERIES - lm_runs} without), "
        f"{len(cells)} cells (lineitem SF {SCALE:g}, default and sorted layouts, the benchmark's queries), "
        f"one `local[2]` session with a 2 GiB heap; figures after Python and JVM GC, every {EVERY} queries.\n"
        f"Wall time: {t_end - t_start:.0f} s ({t_refs - t_start:.0f} s data and references, "
        f"{t_end - t_refs:.0f} s for the {QUERIES} queries). Heap change from the second hundred to the last: "
        f"{(last['heap'] - second['heap']) / MIB:+.1f} MiB ({slope / 1024:+.2f} KiB per query). "
        f"Wrong answers: {len(failures)}.\n\n{table}\n"
    )
    print("\n" + summary)
    out = REPO_ROOT / "target" / "soak.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(summary)

    assert not failures, f"{len(failures)} wrong answers; first:\n" + "\n".join(failures[:3])
    leaked = [(r["queries"], r["data_fds"]) for r in records if r["data_fds"]]
    assert not leaked, f"file descriptors on data files left open: {leaked[:3]}"
    for what, value in (("heap used", lambda r: r["heap"]),
                        ("direct + mapped buffers", lambda r: r["direct"] + r["mapped"]),
                        ("non-heap used", lambda r: r["nonheap"])):
        base, end = value(second), value(last)
        assert end <= base + _margin(base), (
            f"{what} grew from {base / MIB:.1f} MiB (after {second['queries']} queries) to {end / MIB:.1f} MiB "
            f"(after {last['queries']}), more than {_margin(base) / MIB:.0f} MiB\n{table}"
        )
