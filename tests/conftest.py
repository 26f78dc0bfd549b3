"""Shared fixtures and helpers for the lmspark Python suites.

Every expectation in these suites comes from vanilla Spark reading the same data (lmspark off,
Parquet filter pushdown off, so the reference is the data itself) or from pyarrow; nothing is
hard-coded.

Run with a development jar: ``LMSPARK_JAR=/tmp/lmspark-dev/lmspark.jar pytest -q tests``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import decimal
import math
import os
import tempfile
import re
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator, Union

import pytest

# Python-side datetime conversion in collect() uses the process time zone; pin it (and Spark's)
# to UTC so that both runs are converted the same way and no DST gaps get in the way.
os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):
    time.tzset()

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

import lmspark  # noqa: E402
from lmspark import enable_lm  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]

LM_NODE = "LmParquetScan"
SPARK_NODE = "FileScan parquet"
ENABLED_KEY = getattr(getattr(lmspark, "conf", None), "ENABLED", "spark.lmspark.enabled")
BATCH_SIZE_KEY = getattr(getattr(lmspark, "conf", None), "BATCH_SIZE", "spark.lmspark.batchSize")
#: ``Format: Parquet [lmspark fallback: <reasons>]``; the value ends the metadata entry.
FALLBACK_RE = re.compile(r"lmspark fallback: (.*?)\](?=,\s|\s*$)", re.M)
EXTENDED_SECTION = "== Extended Information (lmspark) =="

#: The configuration of the reference run: vanilla Spark, no Parquet filter pushdown.
REFERENCE_CONF = {ENABLED_KEY: "false", "spark.sql.parquet.filterPushdown": "false"}
LM_CONF = {ENABLED_KEY: "true"}

Query = Union[str, Callable[[SparkSession], DataFrame]]

#: A folder of Delta Lake jars (``make delta-jars``): when set, the session loads Delta too, for
#: ``test_delta.py`` (``make test-delta`` runs that file alone).
DELTA_JARS = os.environ.get("LMSPARK_DELTA_JARS")


# --------------------------------------------------------------------------------------------
# Session
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # a fresh warehouse per session: a table left by an interrupted or concurrent run never clashes
    warehouse = tempfile.mkdtemp(prefix="lmspark-pytest-warehouse-")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lmspark-pytests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "3g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.sql.session.timeZone", "UTC")
        # what 4.x writes by default; 3.5 refuses to write ancient dates without it
        .config("spark.sql.parquet.datetimeRebaseModeInWrite", "CORRECTED")
        .config("spark.sql.parquet.int96RebaseModeInWrite", "CORRECTED")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        # plan strings abbreviate metadata values (Format included) beyond this length
        .config("spark.sql.maxMetadataStringLength", "2000")
        .config("spark.sql.warehouse.dir", warehouse)
    )
    if DELTA_JARS:
        jars = sorted(str(p) for p in Path(DELTA_JARS).glob("*.jar"))
        builder = (
            builder.config("spark.jars", ",".join(jars))
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            # Delta's log state in 2 partitions, not 50: its data skipping runs a job over them before
            # every query, which on these small tables was most of a case's time (both sides alike)
            .config("spark.databricks.delta.snapshotPartitions", "2")
        )
    session = enable_lm(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    shutil.rmtree(warehouse, ignore_errors=True)


@pytest.fixture(scope="session")
def lm_jar_loaded(spark: SparkSession) -> bool:
    """True when the lmspark classes are on the session's class path."""
    try:
        jvm = spark._jvm
        jvm.java.lang.Class.forName(
            lmspark.EXTENSION_CLASS, True, jvm.java.lang.Thread.currentThread().getContextClassLoader()
        )
        return True
    except Exception:
        return False


@pytest.fixture(autouse=True)
def _needs_jar(request):
    """Tests that use a Spark session need the lmspark jar; say so instead of failing obscurely."""
    if "spark" in request.fixturenames and not request.getfixturevalue("lm_jar_loaded"):
        pytest.skip(f"lmspark classes not loadable from {lmspark.jar_path()} (set LMSPARK_JAR)")


# --------------------------------------------------------------------------------------------
# Conf handling
# --------------------------------------------------------------------------------------------

@contextlib.contextmanager
def conf(spark: SparkSession, settings: dict | None = None, **kw) -> Iterator[None]:
    """Sets SQL confs for the duration of the block, then restores (or unsets) them."""
    settings = dict(settings or {})
    settings.update(kw)
    saved = {}
    for key, value in settings.items():
        saved[key] = spark.conf.get(key, None)
        spark.conf.set(key, str(value).lower() if isinstance(value, bool) else str(value))
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


# --------------------------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------------------------


def executed_plan(df: DataFrame) -> str:
    """The executed physical plan; under AQE, run the query first to see the final plan."""
    return df._jdf.queryExecution().executedPlan().toString()


def explain_string(df: DataFrame, mode: str = "extended") -> str:
    """What ``df.explain(mode)`` prints, as a string."""
    return df._sc._jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), mode)


def fallback_reasons(plan: str) -> list[str]:
    """Every ``lmspark fallback: <reason>`` in a plan string (an abbreviated one loses its
    trailing ``...``)."""
    out = []
    for m in FALLBACK_RE.finditer(plan):
        reason = m.group(1).strip()
        out.append(reason[:-3].rstrip() if reason.endswith("...") else reason)
    return out


def assert_clean_fallback(plan: str) -> list[str]:
    """The plan is Spark's scan, declined by lmspark with non-empty reasons."""
    assert LM_NODE not in plan, plan
    reasons = fallback_reasons(plan)
    assert reasons, f"expected 'lmspark fallback: <reason>' in the plan:\n{plan}"
    assert all(r for r in reasons), f"empty fallback reason in:\n{plan}"
    return reasons


def lm_status(plan: str) -> str:
    """A one-line summary: 'LmParquetScan', 'fallback: ...', or 'no Parquet scan'."""
    if LM_NODE in plan:
        return LM_NODE
    reasons = fallback_reasons(plan)
    if reasons:
        return "fallback: " + "; ".join(dict.fromkeys(reasons))
    if SPARK_NODE in plan:
        return "Spark scan without lmspark mark"
    return "no Parquet scan"


# --------------------------------------------------------------------------------------------
# Result normalisation and comparison
# --------------------------------------------------------------------------------------------


_JSON_OPTIONS = {
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
    "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
    "dateFormat": "yyyy-MM-dd",
    "ignoreNullFields": "false",
}


def _has_datetime(dtype: T.DataType) -> bool:
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType, T.DateType)):
        return True
    if isinstance(dtype, T.StructType):
        return any(_has_datetime(f.dataType) for f in dtype.fields)
    if isinstance(dtype, T.ArrayType):
        return _has_datetime(dtype.elementType)
    if isinstance(dtype, T.MapType):
        return _has_datetime(dtype.keyType) or _has_datetime(dtype.valueType)
    return False


def _comparable_df(df: DataFrame) -> DataFrame:
    """Top-level dates and timestamps as exact integers, nested ones via exact JSON text (Python
    datetimes cannot hold years after 9999); everything else unchanged."""
    cols = []
    changed = False
    for f in df.schema.fields:
        c = F.col(f"`{f.name}`")
        if isinstance(f.dataType, T.TimestampType):
            cols.append(F.unix_micros(c).alias(f.name))
            changed = True
        elif isinstance(f.dataType, T.TimestampNTZType):
            # The session time zone is UTC, so this cast is exact.
            cols.append(F.unix_micros(c.cast("timestamp")).alias(f.name))
            changed = True
        elif isinstance(f.dataType, T.DateType):
            cols.append(F.unix_date(c).alias(f.name))
            changed = True
        elif _has_datetime(f.dataType):
            # Nested dates/timestamps: as exact JSON text (microseconds, any year, binary as base64).
            cols.append(F.to_json(c, _JSON_OPTIONS).alias(f.name))
            changed = True
        else:
            cols.append(c)
    return df.select(*cols) if changed else df


def normalise(value):
    """A hashable, exact representation: floats by repr (tells -0.0 from 0.0, NaN equals NaN),
    bytes as bytes, rows/lists as tuples, maps as sorted item tuples."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return ("float", "nan")
        return ("float", repr(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("bytes", bytes(value))
    if isinstance(value, decimal.Decimal):
        return ("decimal", str(value))
    if isinstance(value, dt.datetime):
        return ("datetime", value.isoformat())
    if isinstance(value, dt.date):
        return ("date", value.isoformat())
    if isinstance(value, dict):
        return ("map", tuple(sorted(((normalise(k), normalise(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, (list, tuple)):  # Row is a tuple
        return tuple(normalise(v) for v in value)
    if hasattr(value, "getBytes") and hasattr(value, "getSrid"):  # Geometry / Geography (Spark 4.3)
        return (type(value).__name__, bytes(value.getBytes()), value.getSrid())
    return value


def collect_normalised(df: DataFrame) -> Counter:
    return Counter(normalise(tuple(r)) for r in _comparable_df(df).collect())


def _as_df(spark: SparkSession, query: Query) -> DataFrame:
    return spark.sql(query) if isinstance(query, str) else query(spark)


def run_query(spark: SparkSession, query: Query, settings: dict) -> tuple[Counter, str, list[str]]:
    """Runs the query under the given confs: (rows as a multiset, executed plan, column names).
    The DataFrame is built inside the conf block, so that planning sees the confs."""
    run = run_query_full(spark, query, settings)
    return run.rows, run.plan, run.columns


@dataclasses.dataclass
class QueryRun:
    """One run of a query: rows in the order Spark returned them (normalised, dates and
    timestamps as integers), the executed plan, the result schema as the query produced it
    (before the date/timestamp conversion), and (read on first use) the summed metrics of its
    lmspark scans."""

    ordered: list
    plan: str
    columns: list[str]
    schema: T.StructType
    _df: DataFrame = dataclasses.field(repr=False)
    _metrics: dict | None = dataclasses.field(default=None, repr=False)

    @property
    def rows(self) -> Counter:
        return Counter(self.ordered)

    @property
    def metrics(self) -> dict[str, int]:
        if self._metrics is None:
            self._metrics = lm_scan_metrics(self._df)
        return self._metrics


def run_query_full(spark: SparkSession, query: Query, settings: dict) -> QueryRun:
    """:func:`run_query`, keeping row order, the schema and the lmspark scan metrics."""
    with conf(spark, settings):
        original = _as_df(spark, query)
        df = _comparable_df(original)
        ordered = [normalise(tuple(r)) for r in df.collect()]
        return QueryRun(ordered, executed_plan(df), df.columns, original.schema, df)


# --------------------------------------------------------------------------------------------
# What lmspark did: scan metrics and per-file fallback reasons
# --------------------------------------------------------------------------------------------

#: Metric keys of LmParquetScanExec (lmspark.plan.LmMetrics).
FILES_READ, FILES_FALLBACK, ROW_GROUPS_READ = "lmFilesRead", "filesFallback", "rowGroupsRead"
SPLITS_PRUNED = "lmSplitsPruned"
_LM_METRICS = (FILES_READ, FILES_FALLBACK, ROW_GROUPS_READ, "lmBytesRead", SPLITS_PRUNED)


def lm_scan_metrics(df: DataFrame) -> dict[str, int]:
    """The metrics of every LmParquetScanExec in ``df``'s executed plan, summed (all zero
    without one), through ``lmspark.metrics``. Read after the query ran: files read by lmspark,
    files handed to Spark's reader, row groups read, bytes read, splits dropped at planning;
    ``scans``: how many lmspark scans."""
    got = lmspark.metrics(df)
    totals = dict.fromkeys(_LM_METRICS, 0)
    totals.update({k: got.get(k, 0) for k in _LM_METRICS})
    totals["scans"] = got.get("scans", 0)
    return totals


#: ``lmspark hands <file> to Spark's reader: <reason>`` (lmspark.scan.LmParquetFileFormat, INFO).
FILE_FALLBACK_RE = re.compile(r"lmspark hands (\S+) to Spark's reader: (.*)")


class LmLog:
    """What lmspark logged at INFO and above while a :func:`capture_lm_log` block ran."""

    def __init__(self, writer):
        self._writer = writer

    def text(self) -> str:
        return str(self._writer.toString())

    def file_fallbacks(self) -> dict[str, str]:
        """File path (as logged, a URI) -> why lmspark handed it to Spark's reader."""
        return {m.group(1): m.group(2).strip() for m in FILE_FALLBACK_RE.finditer(self.text())}


@contextlib.contextmanager
def capture_lm_log(spark: SparkSession, logger: str = "lmspark") -> Iterator[LmLog]:
    """Captures the ``lmspark`` loggers' INFO messages (driver and, in local mode, executors:
    one JVM) for the duration of the block, without echoing them to the console."""
    jvm = spark._jvm
    log4j = jvm.org.apache.logging.log4j
    core = log4j.core
    ctx = log4j.LogManager.getContext(False)
    config = ctx.getConfiguration()
    writer = jvm.java.io.StringWriter()
    layout = core.layout.PatternLayout.newBuilder().withPattern("%m%n").build()
    name = f"lmspark-pytest-capture-{id(writer)}"
    appender = core.appender.WriterAppender.createAppender(layout, None, writer, name, False, True)
    appender.start()
    config.addAppender(appender)
    existing = config.getLoggerConfig(logger)
    had_own_config = existing.getName() == logger
    old_level = existing.getLevel()
    core.config.Configurator.setLevel(logger, log4j.Level.INFO)
    logger_config = config.getLoggerConfig(logger)
    old_additive = logger_config.isAdditive()
    logger_config.addAppender(appender, log4j.Level.INFO, None)
    logger_config.setAdditive(False)
    ctx.updateLoggers()
    try:
        yield LmLog(writer)
    finally:
        logger_config.removeAppender(name)
        logger_config.setAdditive(old_additive)
        if had_own_config:
            logger_config.setLevel(old_level)
        else:
            config.removeLogger(logger)
        ctx.updateLoggers()
        appender.stop()


def assert_lm_read_everything(run: QueryRun, row_groups: int | None = None) -> None:
    """The run used LmParquetScan, lmspark itself read at least one file (or dropped splits at
    planning, which only lmspark does), and handed none to Spark's reader (a silent per-file
    fallback must not pass as success); with ``row_groups``, it read exactly that many (non-empty)
    row groups."""
    assert LM_NODE in run.plan, f"expected {LM_NODE} in the executed plan, got {lm_status(run.plan)}:\n{run.plan}"
    assert not fallback_reasons(run.plan), f"unexpected fallback in:\n{run.plan}"
    m = run.metrics
    assert m[FILES_FALLBACK] == 0, f"lmspark handed {m[FILES_FALLBACK]} file(s) to Spark's reader (metrics {m})"
    assert m[FILES_READ] > 0 or m[SPLITS_PRUNED] > 0, f"lmspark read no file itself (metrics {m})"
    if row_groups is not None:
        assert m[ROW_GROUPS_READ] == row_groups, f"expected {row_groups} row groups read, metrics {m}"


def fallback_explanation(run: QueryRun, log: LmLog) -> list[str]:
    """Why lmspark did not read (all of) the data itself: the plan's decline reasons, or one
    logged reason per file handed to Spark's reader. Asserts such reasons are shown, and
    returns them (empty when lmspark read everything)."""
    if LM_NODE not in run.plan:
        return assert_clean_fallback(run.plan)
    n = run.metrics[FILES_FALLBACK]
    if n == 0:
        return []
    reasons = log.file_fallbacks()
    assert len(reasons) >= 1 and all(reasons.values()), (
        f"lmspark handed {n} file(s) to Spark's reader without logging why:\n{log.text()[:2000]}"
    )
    return sorted(set(reasons.values()))


def describe_difference(lm: Counter, ref: Counter, limit: int = 5) -> str:
    only_lm = lm - ref
    only_ref = ref - lm
    lines = [
        f"lmspark: {sum(lm.values())} rows, reference: {sum(ref.values())} rows;"
        f" {sum(only_lm.values())} rows only in lmspark, {sum(only_ref.values())} only in reference"
    ]
    for title, c in (("only in lmspark", only_lm), ("only in reference", only_ref)):
        for row, n in list(c.items())[:limit]:
            lines.append(f"  {title} (x{n}): {str(row)[:400]}")
    return "\n".join(lines)


def assert_same_answer(
    spark: SparkSession,
    query: Query,
    lm_conf: dict | None = None,
    common_conf: dict | None = None,
) -> str:
    """Runs ``query`` (SQL text, or a function of the session returning a DataFrame) with lmspark
    on, then with lmspark off and Parquet filter pushdown off (the reference), asserts the results
    are the same multiset of rows, exactly, and returns the lmspark executed plan string.

    ``common_conf`` applies to both runs, ``lm_conf`` to the lmspark run only.
    """
    common = dict(common_conf or {})
    lm_rows, lm_plan, lm_cols = run_query(spark, query, {**common, **LM_CONF, **(lm_conf or {})})
    ref_rows, ref_plan, ref_cols = run_query(spark, query, {**common, **REFERENCE_CONF})
    assert LM_NODE not in ref_plan, f"the reference run used lmspark:\n{ref_plan}"
    assert lm_cols == ref_cols, f"columns differ: lmspark {lm_cols} vs reference {ref_cols}"
    assert lm_rows == ref_rows, (
        "results differ\n" + describe_difference(lm_rows, ref_rows) + f"\nlmspark plan:\n{lm_plan}"
    )
    return lm_plan


def assert_same_answer_and_lm_used(spark: SparkSession, query: Query, **kw) -> str:
    """:func:`assert_same_answer`, and the lmspark run really used ``LmParquetScan``."""
    plan = assert_same_answer(spark, query, **kw)
    assert LM_NODE in plan, f"expected {LM_NODE} in the executed plan, got {lm_status(plan)}:\n{plan}"
    assert not fallback_reasons(plan), f"unexpected fallback in:\n{plan}"
    return plan


def assert_same_answer_lm_or_fallback(spark: SparkSession, query: Query, **kw) -> str:
    """:func:`assert_same_answer`, and the lmspark plan either used ``LmParquetScan`` or shows a
    clean fallback with a non-empty reason."""
    plan = assert_same_answer(spark, query, **kw)
    if LM_NODE not in plan:
        assert_clean_fallback(plan)
    return plan


# --------------------------------------------------------------------------------------------
# Small query shapes and error summaries shared by the suites
# --------------------------------------------------------------------------------------------


def reversed_columns(df: DataFrame) -> DataFrame:
    """The same rows, columns in reverse order (readers must not depend on column order)."""
    return df.select(*[f"`{c}`" for c in reversed(df.columns)])


def first_column_not_null(df: DataFrame) -> DataFrame:
    """Rows whose first column is not null (a filter lmspark may push into its reader)."""
    return df.where(df[f"`{df.columns[0]}`"].isNotNull()) if df.columns else df


def error_summary(e: BaseException, limit: int = 300) -> str:
    """The most telling line of an error: the innermost 'Caused by', else the first line."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    causes = [ln for ln in lines if ln.startswith("Caused by:")]
    if causes:
        return causes[-1][len("Caused by:"):].strip()[:limit]
    for line in lines:
        if not line.startswith(("Traceback", "JVM stacktrace")):
            return line[:limit]
    return type(e).__name__


def jvm_alive(spark: SparkSession) -> None:
    """The session still answers (after a query that was expected to fail)."""
    assert spark.range(3).count() == 3, "the Spark session no longer answers"


@pytest.fixture(scope="session")
def helpers():
    """The helper functions, for tests that prefer a fixture over an import."""
    import types

    return types.SimpleNamespace(
        conf=conf,
        assert_same_answer=assert_same_answer,
        assert_same_answer_and_lm_used=assert_same_answer_and_lm_used,
        assert_same_answer_lm_or_fallback=assert_same_answer_lm_or_fallback,
        executed_plan=executed_plan,
        explain_string=explain_string,
    )
