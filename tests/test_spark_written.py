"""Files written by Spark itself (parquet-mr), tables, bucketing, caching and file-level functions.

The data come from the pyarrow generator; Spark writes them with its own writer under several
writer settings; every expectation is vanilla Spark's answer on the same files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import datagen
from conftest import (
    LM_CONF,
    LM_NODE,
    REFERENCE_CONF,
    assert_same_answer,
    assert_same_answer_and_lm_used,
    conf,
    executed_plan,
    lm_status,
    run_query,
)

WRITERS = {
    "default": {},
    "micros_nodict": {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS", "parquet.enable.dictionary": "false"},
    "millis_zstd": {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS", "spark.sql.parquet.compression.codec": "zstd"},
    "v2_pages": {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS", "parquet.writer.version": "PARQUET_2_0"},
    "gzip_small_pages": {
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.parquet.compression.codec": "gzip",
        "parquet.page.size": "1024",
        "parquet.block.size": "65536",
    },
}

# parquet.* writer settings are Hadoop settings, given to the writer as options
_WRITE_OPTIONS = {"parquet.enable.dictionary", "parquet.writer.version", "parquet.page.size", "parquet.block.size"}


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("spark_written_src")
    for i, nulls in enumerate(("some", "none", "all")):
        datagen.write(datagen.make_table(datagen.SUPPORTED_COLUMNS, 3000, 500 + i, nulls), root / f"src-{nulls}.parquet")
    return root


@pytest.fixture(scope="module")
def spark_written(spark, source, tmp_path_factory) -> dict[str, Path]:
    out = {}
    base = tmp_path_factory.mktemp("spark_written")
    for name, settings in WRITERS.items():
        target = base / name
        sql_conf = {k: v for k, v in settings.items() if k not in _WRITE_OPTIONS}
        options = {k: v for k, v in settings.items() if k in _WRITE_OPTIONS}
        with conf(spark, {**REFERENCE_CONF, **sql_conf}):
            (
                spark.read.parquet(str(source))
                .repartition(3)
                .write.options(**options)
                .mode("overwrite")
                .parquet(str(target))
            )
        out[name] = target
    return out


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize(
    "query",
    ["select_star", "projection", "filter", "count"],
)
def test_spark_written(spark, spark_written, writer, query):
    p = str(spark_written[writer])
    make = {
        "select_star": lambda s: s.read.parquet(p),
        "projection": lambda s: s.read.parquet(p).select("c_ts_us", "c_string", "c_double"),
        "filter": lambda s: s.read.parquet(p).where("c_int > 0 AND c_ts_ms < TIMESTAMP'5000-01-01 00:00:00'"),
        "count": lambda s: s.read.parquet(p).groupBy().count(),
    }[query]
    assert_same_answer_and_lm_used(spark, make)


def test_spark_written_equals_source(spark, source, spark_written):
    """Round trip: what Spark wrote reads back as the pyarrow-written source (lmspark on both)."""
    src, _, _ = run_query(spark, lambda s: s.read.parquet(str(source)), LM_CONF)
    for name, path in spark_written.items():
        if "millis" in name:  # TIMESTAMP_MILLIS output drops microseconds: not a round trip
            continue
        got, plan, _ = run_query(spark, lambda s: s.read.parquet(str(path)), LM_CONF)
        assert LM_NODE in plan, lm_status(plan)
        assert got == src, name


# --------------------------------------------------------------------------------------------
# Tables, bucketing, caching, file-level functions, limits
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tables(spark, source):
    with conf(spark, REFERENCE_CONF):
        df = spark.read.parquet(str(source))
        df.write.mode("overwrite").bucketBy(4, "c_int").sortBy("c_int").format("parquet").saveAsTable("lm_bucketed_a")
        df.where("c_long > 0").write.mode("overwrite").bucketBy(4, "c_int").format("parquet").saveAsTable("lm_bucketed_b")
        df.write.mode("overwrite").partitionBy("c_bool").format("parquet").saveAsTable("lm_partitioned")
    yield
    for t in ("lm_bucketed_a", "lm_bucketed_b", "lm_partitioned"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM lm_bucketed_a",
        "SELECT a.c_int, count(*), max(b.c_string) FROM lm_bucketed_a a JOIN lm_bucketed_b b ON a.c_int = b.c_int GROUP BY a.c_int",
        "SELECT * FROM lm_bucketed_a WHERE c_int = 2147483647",
        "SELECT c_int, count(*) FROM lm_bucketed_a GROUP BY c_int",
        "SELECT * FROM lm_partitioned WHERE c_bool",
        "SELECT c_bool, count(*), min(c_date) FROM lm_partitioned GROUP BY c_bool",
    ],
    ids=["bucketed_scan", "bucketed_join", "bucket_pruning", "bucketed_agg", "table_partition_filter", "table_group_by"],
)
def test_tables(spark, tables, sql):
    plan = assert_same_answer_and_lm_used(spark, sql, common_conf={"spark.sql.autoBroadcastJoinThreshold": "-1"})
    assert "FileScan parquet" not in plan


def test_bucketed_join_needs_no_shuffle(spark, tables):
    sql = "SELECT a.c_int, b.c_long FROM lm_bucketed_a a JOIN lm_bucketed_b b ON a.c_int = b.c_int"
    common = {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.adaptive.enabled": "false"}
    with conf(spark, {**common, **REFERENCE_CONF}):
        vanilla = executed_plan(spark.sql(sql))
    with conf(spark, {**common, **LM_CONF}):
        lm = executed_plan(spark.sql(sql))
    assert LM_NODE in lm
    # lmspark keeps the scan's output partitioning: no more exchanges than vanilla Spark plans
    assert lm.count("Exchange") == vanilla.count("Exchange"), (vanilla, lm)


def test_cached(spark, source):
    p = str(source)
    with conf(spark, LM_CONF):
        df = spark.read.parquet(p).where("c_int > 0")
        df.cache()
        try:
            first = df.count()
            lm_rows, _, _ = run_query(spark, lambda s: df, LM_CONF)
            plan = executed_plan(df)
        finally:
            df.unpersist(blocking=True)
    assert "InMemoryTableScan" in plan
    ref_rows, _, _ = run_query(spark, lambda s: s.read.parquet(p).where("c_int > 0"), REFERENCE_CONF)
    assert lm_rows == ref_rows
    assert first == sum(ref_rows.values())


def test_input_file_functions(spark, source):
    p = str(source)
    assert_same_answer_and_lm_used(
        spark,
        lambda s: s.read.parquet(p).selectExpr("input_file_name() AS f", "input_file_block_start() AS b", "c_int"),
        common_conf={"spark.sql.files.maxPartitionBytes": "65536", "spark.sql.files.openCostInBytes": "1024"},
    )


def test_limit(spark, source):
    p = str(source)
    for n in (0, 1, 7, 5000):
        rows, plan, _ = run_query(spark, lambda s: s.read.parquet(p).limit(n).groupBy().count(), LM_CONF)
        ref, _, _ = run_query(spark, lambda s: s.read.parquet(p).limit(n).groupBy().count(), REFERENCE_CONF)
        assert n == 0 or LM_NODE in plan, plan  # limit 0 plans no scan at all
        assert rows == ref


def test_sample_and_sort(spark, source):
    p = str(source)
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(p).sample(fraction=0.3, seed=7).orderBy("c_long"))
    cols = list(datagen.SUPPORTED_COLUMNS)  # a total order: ties are identical rows
    assert_same_answer(spark, lambda s: s.read.parquet(p).orderBy(*cols).limit(50))
