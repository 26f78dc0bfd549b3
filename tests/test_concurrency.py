"""Concurrency: many small files, many tasks on ``local[2]``, and queries from several Python threads.

200 seeded pyarrow files of a few hundred rows each (several row groups; some dictionary-encoded,
some plain; some with a page index; nulls in some; an optional column ``c_long`` present in only
some files, so the table is read with ``mergeSchema``). Three sessions share the one SparkContext
(``spark.newSession()``, each with its own SQL conf, so no thread changes another's conf):

- ``serial``: lmspark on, large splits (one task reads many files), queries run one at a time;
- ``many``: lmspark on, 8 KiB splits and no open cost, so a query has hundreds of tasks, most of
  them a part of one file, and two cores run them interleaved;
- ``reference``: lmspark off, Parquet filter pushdown off, large splits.

Every query runs serially in ``serial`` and ``reference``; then all the queries, twice each, plus
a reference run of each, are submitted in a seeded shuffled order to a pool of 4 Python threads.
Every answer must equal the serial lmspark answer and the reference answer, exactly, and every
lmspark run must have read every split itself (no fallback). ``LMSPARK_TEST_SEED`` changes the data.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

import datagen
from conftest import (
    ENABLED_KEY,
    FILES_FALLBACK,
    FILES_READ,
    LM_NODE,
    REFERENCE_CONF,
    SPLITS_PRUNED,
    _comparable_df,
    describe_difference,
    executed_plan,
    lm_scan_metrics,
    lm_status,
    normalise,
)

SEED = int(os.environ.get("LMSPARK_TEST_SEED", "20261122"))
FILES = 200
THREADS = 4
REPEATS = 2

BASE_COLUMNS = {
    "c_int": pa.int32(),
    "c_string": pa.string(),
    "c_double": pa.float64(),
    "c_date": pa.date32(),
}


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> tuple[Path, list[str]]:
    """The folder of small files, and a few string values that occur in it (for the filters)."""
    root = tmp_path_factory.mktemp("concurrency") / "t"
    rng = random.Random(SEED)
    next_id = 0
    strings: list[str] = []
    for i in range(FILES):
        n = rng.randint(150, 600)
        columns = dict(BASE_COLUMNS)
        if rng.random() < 0.4:
            columns["c_long"] = pa.int64()
        t = datagen.make_table(columns, n, SEED * 7 + i, rng.choice(["some", "some", "none"]))
        ids = pa.array(range(next_id, next_id + n), pa.int64())
        next_id += n
        t = t.add_column(0, pa.field("id", pa.int64()), ids)
        strings += [s for s in t.column("c_string").to_pylist()[:50] if s is not None]
        datagen.write(
            t, root / f"part-{i:04d}.parquet",
            row_group_size=rng.choice([60, 100, 250]),
            data_page_size=rng.choice([256, 1024]),
            use_dictionary=rng.random() < 0.6,
            write_page_index=rng.random() < 0.5,
            data_page_version=rng.choice(["1.0", "2.0"]),
            compression=rng.choice(["snappy", "zstd", "none"]),
        )
    counts = Counter(strings)
    picks = [s for s, _ in counts.most_common(3)] + rng.sample(sorted(counts), 2)
    return root, picks


def _quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _queries(picks: list[str], total_rows: int) -> dict[str, str]:
    rng = random.Random(SEED + 1)
    lo = rng.randrange(total_rows // 2)
    return {
        "full": "SELECT * FROM t",
        "projection": "SELECT id, c_string FROM t",
        "dict_eq": f"SELECT * FROM t WHERE c_string = {_quote(picks[0])}",
        "dict_in": f"SELECT id, c_double FROM t WHERE c_string IN ({', '.join(_quote(p) for p in picks[1:])})",
        "nulls": "SELECT id, c_int FROM t WHERE c_string IS NULL OR c_date IS NULL",
        "range": f"SELECT * FROM t WHERE id >= {lo} AND id < {lo + total_rows // 10} AND c_int > 0",
        "extra": "SELECT id, c_long FROM t WHERE c_long IS NOT NULL",
        "group_by": "SELECT c_date, count(*) AS n, max(c_double) AS m FROM t GROUP BY c_date",
    }


def _session(spark: SparkSession, folder: Path, settings: dict[str, str]) -> SparkSession:
    s = spark.newSession()
    for k, v in settings.items():
        s.conf.set(k, v)
    s.read.option("mergeSchema", "true").parquet(str(folder)).createOrReplaceTempView("t")
    return s


def _run(session: SparkSession, sql: str) -> tuple[Counter, str, dict]:
    """Rows (a multiset), the executed plan and the lmspark scan metrics; touches no conf."""
    df = _comparable_df(session.sql(sql))
    rows = Counter(normalise(tuple(r)) for r in df.collect())
    return rows, executed_plan(df), lm_scan_metrics(df)


LARGE_SPLITS = {"spark.sql.files.maxPartitionBytes": str(256 * 1024 * 1024)}
SMALL_SPLITS = {"spark.sql.files.maxPartitionBytes": "8192", "spark.sql.files.openCostInBytes": "0"}


def test_many_tasks_and_threads_give_the_serial_answers(spark: SparkSession, small_files) -> None:
    folder, picks = small_files
    total = datagen.row_count(folder)
    queries = _queries(picks, total)
    serial = _session(spark, folder, {ENABLED_KEY: "true", **LARGE_SPLITS})
    many = _session(spark, folder, {ENABLED_KEY: "true", **SMALL_SPLITS})
    reference = _session(spark, folder, {**REFERENCE_CONF, **LARGE_SPLITS})

    expected: dict[str, Counter] = {}
    for name, sql in queries.items():
        ref_rows, ref_plan, _ = _run(reference, sql)
        assert LM_NODE not in ref_plan, f"the reference run used lmspark:\n{ref_plan}"
        rows, plan, metrics = _run(serial, sql)
        assert LM_NODE in plan, f"{name}: {lm_status(plan)}\n{plan}"
        assert metrics[FILES_FALLBACK] == 0 and metrics[FILES_READ] > 0, (name, metrics)
        assert rows == ref_rows, f"{name} (serial): {sql}\n" + describe_difference(rows, ref_rows)
        expected[name] = ref_rows
    assert sum(expected["full"].values()) == total

    jobs = [(name, "many") for name in queries for _ in range(REPEATS)] + [(name, "reference") for name in queries]
    random.Random(SEED + 2).shuffle(jobs)
    sessions = {"many": many, "reference": reference}

    def work(job):
        name, which = job
        return job, _run(sessions[which], queries[name])

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = list(pool.map(work, jobs))

    assert len(results) == len(jobs)
    for (name, which), (rows, plan, metrics) in results:
        assert rows == expected[name], (
            f"{name} ({which}, concurrent): {queries[name]}\n" + describe_difference(rows, expected[name])
        )
        if which == "many":
            assert LM_NODE in plan, f"{name}: {lm_status(plan)}\n{plan}"
            assert metrics[FILES_FALLBACK] == 0, (name, metrics)
            # many tasks: more splits than there are files (files were cut at row groups); a split
            # is read by its task, or dropped at planning when its row groups are all pruned
            assert metrics[FILES_READ] + metrics[SPLITS_PRUNED] > FILES, (name, metrics)
        else:
            assert LM_NODE not in plan
