"""What the plans say: LmParquetScan when lmspark serves a scan, Spark's FileScan when it is off,
and a clean, reasoned fallback when it declines."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import datagen
import lmspark
from conftest import (
    ENABLED_KEY,
    EXTENDED_SECTION,
    LM_CONF,
    LM_NODE,
    REFERENCE_CONF,
    SPARK_NODE,
    assert_clean_fallback,
    assert_same_answer,
    assert_same_answer_and_lm_used,
    assert_same_answer_lm_or_fallback,
    conf,
    executed_plan,
    explain_string,
    fallback_reasons,
    normalise,
)


@pytest.fixture(scope="module")
def flat(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plan_flat")
    for i in range(3):
        t = datagen.make_table(datagen.SUPPORTED_COLUMNS, 800, 10 + i, "some")
        datagen.write(t, root / f"f{i}.parquet", use_dictionary=bool(i % 2))
    return root


@pytest.fixture(scope="module")
def nested(tmp_path_factory) -> Path:
    """A file with flat columns and array/map/struct columns."""
    root = tmp_path_factory.mktemp("plan_nested")
    n = 300
    t = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "name": pa.array([f"n{i % 17}" if i % 5 else None for i in range(n)]),
        "arr": pa.array([[i, i + 1, None][: i % 4] if i % 7 else None for i in range(n)], pa.list_(pa.int32())),
        "m": pa.array([{"k": i, f"k{i % 3}": -i} if i % 6 else None for i in range(n)], pa.map_(pa.string(), pa.int32())),
        "st": pa.array([{"x": i, "y": str(i)} if i % 4 else None for i in range(n)],
                       pa.struct([("x", pa.int32()), ("y", pa.string())])),
    })
    datagen.write(t, root / "nested.parquet", row_group_size=100)
    return root


def _collected_plan(spark, make_df, settings) -> str:
    with conf(spark, settings):
        df = make_df(spark)
        df.collect()
        return executed_plan(df)


# --------------------------------------------------------------------------------------------
# Enabled / disabled, toggled at run time in one session
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("aqe", ["true", "false"])
def test_toggle_at_run_time(spark, flat, aqe):
    q = lambda s: s.read.parquet(str(flat)).where("c_int > 0").groupBy("c_bool").count()  # noqa: E731
    common = {"spark.sql.adaptive.enabled": aqe}
    on = _collected_plan(spark, q, {**common, ENABLED_KEY: "true"})
    assert LM_NODE in on, on
    assert SPARK_NODE not in on, on
    if aqe == "true":
        assert "isFinalPlan=true" in on, on

    off = _collected_plan(spark, q, {**common, ENABLED_KEY: "false"})
    assert SPARK_NODE in off, off
    assert LM_NODE not in off, off
    assert "lmspark fallback" not in off, off

    again = _collected_plan(spark, q, {**common, ENABLED_KEY: "true"})
    assert LM_NODE in again, again
    assert_same_answer_and_lm_used(spark, q, common_conf=common)


def test_enabled_by_default(spark, flat):
    # nothing set: the default is on
    assert spark.conf.get(ENABLED_KEY, None) in (None, "true")
    df = spark.read.parquet(str(flat)).select("c_long")
    df.collect()
    assert LM_NODE in executed_plan(df)


@pytest.mark.parametrize("mode", ["simple", "extended", "formatted", "cost"])
def test_explain_modes_name_the_node(spark, flat, mode):
    with conf(spark, LM_CONF):
        text = explain_string(spark.read.parquet(str(flat)).where("c_long > 5"), mode)
    assert LM_NODE in text, text
    with conf(spark, {ENABLED_KEY: "false"}):
        text = explain_string(spark.read.parquet(str(flat)).where("c_long > 5"), mode)
    assert LM_NODE not in text, text


def test_pushed_filters_listed(spark, flat):
    with conf(spark, LM_CONF):
        df = spark.read.parquet(str(flat)).where("c_int > 5 AND c_string = 'abc'")
        text = explain_string(df, "simple")
        formatted = explain_string(df, "formatted")
    assert LM_NODE in text, text
    assert "PushedFilters: [" in text, text
    pushed = text.split("PushedFilters: [", 1)[1].split("]", 1)[0]
    assert "c_int" in pushed and "c_string" in pushed, text
    assert "PushedFilters" in formatted, formatted
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(str(flat)).where("c_int > 5 AND c_string = 'abc'"))


@pytest.mark.parametrize("aqe", ["true", "false"])
def test_join_and_subquery_under_aqe(spark, flat, aqe):
    """Two scans in one query, a broadcast or a shuffle join, and a scalar subquery."""
    p = str(flat)
    q = (
        f"SELECT a.c_bool, count(*), max(b.c_string) FROM parquet.`{p}` a JOIN parquet.`{p}` b ON a.c_int = b.c_int "
        f"WHERE a.c_long > (SELECT avg(c_long) FROM parquet.`{p}` WHERE c_bool) GROUP BY a.c_bool"
    )
    for broadcast in ("-1", "10485760"):
        plan = assert_same_answer_and_lm_used(
            spark, q, common_conf={"spark.sql.adaptive.enabled": aqe, "spark.sql.autoBroadcastJoinThreshold": broadcast}
        )
        assert SPARK_NODE not in plan, plan


# --------------------------------------------------------------------------------------------
# Declined scans: Spark's scan stays, with a reason in every EXPLAIN mode
# --------------------------------------------------------------------------------------------


def _lm_section(df) -> str:
    """lmspark's part of ``df``'s plan as a user reads it: the EXPLAIN EXTENDED section on the lines
    that have explain providers; on 3.5, which has none (the README says so), ``lmspark.explain``."""
    if _explain_providers_expected():
        extended = explain_string(df, "extended")
        assert EXTENDED_SECTION in extended, extended
        return extended.split(EXTENDED_SECTION, 1)[1]
    return str(lmspark.explain(df))


def _check_declined(spark, make_df, settings=None, reason_contains: str | None = None) -> list[str]:
    settings = {**LM_CONF, **(settings or {})}
    plan = _collected_plan(spark, make_df, settings)
    assert SPARK_NODE in plan, plan
    reasons = assert_clean_fallback(plan)
    if reason_contains:
        assert any(reason_contains.lower() in r.lower() for r in reasons), reasons
    with conf(spark, settings):
        simple = explain_string(make_df(spark), "simple")
        section = _lm_section(make_df(spark))
    assert fallback_reasons(simple), simple
    assert "lmspark fallback" in section, section
    assert any(r in section for r in reasons), (reasons, section)
    return reasons


@pytest.fixture(scope="module")
def udt(spark, tmp_path_factory) -> Path:
    """A file with an ML vector column (a user-defined type: lmspark leaves it to Spark's reader)."""
    from pyspark.ml.linalg import Vectors

    root = tmp_path_factory.mktemp("plan_udt")
    spark.createDataFrame([(i, Vectors.dense([float(i), 1.0])) for i in range(50)], ["id", "vec"]) \
        .coalesce(1).write.mode("overwrite").parquet(str(root))
    return root


def test_declined_unsupported_type(spark, udt):
    make = lambda s: s.read.parquet(str(udt)).select("id", "vec")  # noqa: E731
    _check_declined(spark, make, reason_contains="vec")
    assert_same_answer(spark, make)


@pytest.mark.parametrize("column", ["arr", "m", "st"])
def test_nested_columns_served(spark, nested, column):
    """Lists, maps and structs are read by lmspark itself (no fallback), with vanilla's answer."""
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(str(nested)).select("id", column))
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(str(nested)).select(column).where("id > 150"))


def test_metadata_columns_served(spark, flat):
    """``_metadata``'s file fields and ``row_index`` are served by lmspark, with vanilla's answer."""
    assert_same_answer_and_lm_used(
        spark, lambda s: s.read.parquet(str(flat)).select("c_int", "_metadata.file_path", "_metadata.row_index"))
    assert_same_answer_and_lm_used(
        spark, lambda s: s.read.parquet(str(flat)).where("c_int > 0").select("_metadata.row_index", "_metadata"))


def test_ignore_corrupt_files_served(spark, flat, tmp_path):
    """ignoreCorruptFiles (conf or read option) keeps LmParquetScan; corrupt files among good ones
    (a garbage footer, a cut file) are skipped as Spark skips them, with Spark's answer."""
    settings = {"spark.sql.files.ignoreCorruptFiles": "true"}
    make = lambda s: s.read.parquet(str(flat)).select("c_int", "c_string")  # noqa: E731
    assert_same_answer_and_lm_used(spark, make, common_conf=settings)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for f in sorted(flat.glob("*.parquet")):
        (mixed / f.name).write_bytes(f.read_bytes())
    good = (flat / "f1.parquet").read_bytes()
    (mixed / "g-garbage.parquet").write_bytes(b"PAR1" + bytes(range(256)) * 4 + b"\x10\x00\x00\x00PAR1")
    (mixed / "g-cut.parquet").write_bytes(good[: len(good) * 2 // 3])
    make_mixed = lambda s: s.read.schema(s.read.parquet(str(flat)).schema).parquet(str(mixed)).select("c_int", "c_string")  # noqa: E731
    assert_same_answer_and_lm_used(spark, make_mixed, common_conf=settings)
    option = lambda s: s.read.option("ignoreCorruptFiles", "true").schema(s.read.parquet(str(flat)).schema).parquet(str(mixed))  # noqa: E731
    assert_same_answer_and_lm_used(spark, option)


def test_declined_vectorized_reader_off(spark, flat):
    settings = {"spark.sql.parquet.enableVectorizedReader": "false"}
    make = lambda s: s.read.parquet(str(flat))  # noqa: E731
    _check_declined(spark, make, settings)
    assert_same_answer(spark, make, common_conf=settings)


def test_declined_and_served_in_one_query(spark, flat, udt):
    """A union of a served and a declined scan: both marks in one plan, same answer."""
    q = (
        f"SELECT id AS x FROM parquet.`{udt}` WHERE vec IS NOT NULL "
        f"UNION ALL SELECT c_long AS x FROM parquet.`{flat}`"
    )
    plan = assert_same_answer(spark, q)
    assert LM_NODE in plan, plan
    assert fallback_reasons(plan) and all(fallback_reasons(plan)), plan
    with conf(spark, LM_CONF):
        section = _lm_section(spark.sql(q))
    assert "LmParquetScan" in section and "lmspark fallback" in section, section


def test_explain_extended_sql(spark, flat):
    """EXPLAIN EXTENDED through SQL has the lmspark section too."""
    spark.read.parquet(str(flat)).createOrReplaceTempView("plan_flat_v")
    with conf(spark, LM_CONF):
        text = spark.sql("EXPLAIN EXTENDED SELECT c_int FROM plan_flat_v WHERE c_int > 3").collect()[0][0]
    assert LM_NODE in text, text
    if not _explain_providers_expected():
        # 3.5 has no explain providers: the plan shows LmParquetScan, lmspark.explain the rest.
        assert EXTENDED_SECTION not in text, text
        with conf(spark, LM_CONF):
            assert LM_NODE in str(lmspark.explain(spark.sql("SELECT c_int FROM plan_flat_v WHERE c_int > 3")))
        return
    assert EXTENDED_SECTION in text, text
    assert LM_NODE in text.split(EXTENDED_SECTION, 1)[1]


def test_no_parquet_scan_no_lmspark_mark(spark):
    q = "SELECT id * 2 AS x FROM range(10)"
    with conf(spark, LM_CONF):
        df = spark.sql(q)
        df.collect()
        plan = executed_plan(df)
    assert LM_NODE not in plan and "lmspark fallback" not in plan


def test_reference_conf_is_vanilla(spark, flat):
    plan = _collected_plan(spark, lambda s: s.read.parquet(str(flat)).where("c_int > 0"), REFERENCE_CONF)
    assert SPARK_NODE in plan and LM_NODE not in plan and "lmspark fallback" not in plan


# --------------------------------------------------------------------------------------------
# The Python package, no session needed
# --------------------------------------------------------------------------------------------


@pytest.fixture
def no_running_context(monkeypatch):
    """enable_lm as before any session starts (the suite's own session is hidden from it)."""
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_active_spark_context", None)


def _explain_providers_expected() -> bool:
    return lmspark.spark_line() in lmspark.lines.LINES_WITH_EXPLAIN_PROVIDERS


def test_enable_lm_keeps_user_values_and_returns_builder(monkeypatch, tmp_path, no_running_context):
    jar = tmp_path / "lmspark-test.jar"
    jar.write_bytes(b"")
    monkeypatch.setenv("LMSPARK_JAR", str(jar))
    builder = (
        SparkSession.builder.config("spark.jars", "/opt/a.jar,/opt/b.jar")
        .config("spark.sql.extensions", "com.example.Ext")
        .config("spark.sql.extendedExplainProviders", "com.example.Explain")
    )
    assert lmspark.enable_lm(builder) is builder
    opts = builder._options
    assert opts["spark.jars"].split(",") == ["/opt/a.jar", "/opt/b.jar", str(jar.resolve())]
    assert opts["spark.sql.extensions"].split(",") == ["com.example.Ext", lmspark.EXTENSION_CLASS]
    assert opts["spark.sql.extendedExplainProviders"].split(",") == (
        ["com.example.Explain", lmspark.EXPLAIN_PROVIDER_CLASS] if _explain_providers_expected() else ["com.example.Explain"])
    # idempotent
    lmspark.enable_lm(builder)
    assert builder._options["spark.jars"].split(",").count(str(jar.resolve())) == 1
    assert builder._options["spark.sql.extensions"].split(",").count(lmspark.EXTENSION_CLASS) == 1


def test_enable_lm_on_fresh_builder(monkeypatch, tmp_path, no_running_context):
    jar = tmp_path / "x.jar"
    jar.write_bytes(b"")
    monkeypatch.setenv("LMSPARK_JAR", str(jar))
    builder = SparkSession.builder
    assert lmspark.enable_lm(builder) is builder
    assert builder._options["spark.jars"] == str(jar.resolve())
    assert builder._options["spark.sql.extensions"] == "lmspark.LmSparkExtensions"
    if _explain_providers_expected():
        assert builder._options["spark.sql.extendedExplainProviders"] == "lmspark.plan.LmExplain"
    else:  # Spark 3.5 has no such key
        assert "spark.sql.extendedExplainProviders" not in builder._options
    # a fresh builder does not inherit another builder's options
    assert "spark.jars" not in SparkSession.builder._options


def test_jar_path_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LMSPARK_JAR", str(tmp_path / "j.jar"))
    assert lmspark.jar_path() == str((tmp_path / "j.jar").resolve())


def test_conf_names_enabled():
    assert lmspark.conf.ENABLED == "spark.lmspark.enabled"
    assert lmspark.conf.DEFAULTS["spark.lmspark.enabled"] == "true"
    for key in lmspark.conf.DEFAULTS:
        assert key.startswith("spark.lmspark.")


def test_too_many_columns(spark, tmp_path):
    """More columns than whole-stage codegen takes (spark.sql.codegen.maxFields=100): Spark's own
    scan returns rows; lmspark serves it or declines with a reason, with the same answer, also
    when one file needs lmspark's per-file fallback to Spark's reader."""
    n = 120
    t = pa.table({f"c{i}": pa.array([j * i if j % 5 else None for j in range(200)], pa.int32()) for i in range(n)})
    path = str(datagen.write(t, tmp_path / "wide" / "plain.parquet"))
    datagen.write(t, tmp_path / "wide" / "delta.parquet", use_dictionary=False, column_encoding={"c3": "DELTA_BINARY_PACKED"})
    assert_same_answer_lm_or_fallback(spark, lambda s: s.read.parquet(path))
    assert_same_answer_lm_or_fallback(spark, lambda s: s.read.parquet(str(tmp_path / "wide")))
    # a few of those columns fit: served
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(path).select("c7", "c119").where("c7 > 10"))


@pytest.mark.parametrize(
    "settings",
    [{"spark.sql.codegen.wholeStage": "false"}, {"spark.sql.codegen.maxFields": "1"}],
    ids=["wholeStage_off", "maxFields_1"],
)
def test_no_whole_stage_codegen_with_per_file_fallback(spark, tmp_path, settings):
    """Without whole-stage codegen for the scan, a file that lmspark hands to Spark's reader must
    still read (smallest case: two columns, one DELTA_BINARY_PACKED)."""
    t = pa.table({"a": pa.array([1, 2, 3], pa.int32()), "b": pa.array([4, 5, 6], pa.int64())})
    path = str(datagen.write(t, tmp_path / "delta.parquet", use_dictionary=False, column_encoding={"a": "DELTA_BINARY_PACKED"}))
    assert_same_answer_lm_or_fallback(spark, lambda s: s.read.parquet(path), common_conf=settings)
    plain = str(datagen.write(t, tmp_path / "plain.parquet", use_dictionary=False))
    assert_same_answer_lm_or_fallback(spark, lambda s: s.read.parquet(plain), common_conf=settings)


# --------------------------------------------------------------------------------------------
# Top-k: ORDER BY ... LIMIT k straight over the scan
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("column", ["c_int", "c_double", "c_string", "c_date", "c_ts_us", "c_bool"])
def test_top_k_reads_sort_columns_first_and_answers_as_spark(spark, flat, column):
    """Over pyarrow's files (three of them, dictionary on and off), ``ORDER BY c LIMIT k`` is read
    by lmspark's top-k (``LmTopK`` in the plan) and its rows, in order, are vanilla Spark's. The
    rows are taken through the RDD (Spark's shuffle of the tasks' top-k), whose order is
    deterministic; ``collect()`` merges the tasks in the order they finish."""
    orders = (([F.col(column).desc_nulls_last(), F.col("c_long")], 7),
              ([F.col(column).asc_nulls_first(), F.col("c_long").desc()], 40))
    for order, limit in orders:
        def make(s):
            return s.read.parquet(str(flat)).orderBy(*order).limit(limit)
        with conf(spark, REFERENCE_CONF):
            expected = [normalise(tuple(r)) for r in make(spark).rdd.collect()]
        with conf(spark, LM_CONF):
            df = make(spark)
            actual = [normalise(tuple(r)) for r in df.rdd.collect()]
            plan = executed_plan(df)
        assert "LmTopK: each task's top" in plan, plan
        assert actual == expected, f"ORDER BY {order} LIMIT {limit}"
