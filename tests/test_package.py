"""The Python package's choice of jar per Spark line, and the errors enable_lm raises instead of
leaving a session broken."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import lmspark
from lmspark import lines

REPO_ROOT = Path(__file__).resolve().parents[1]


def _lines_file() -> dict[str, str]:
    """project/spark-lines.txt: line -> Scala binary version."""
    out = {}
    for raw in (REPO_ROOT / "project" / "spark-lines.txt").read_text().splitlines():
        if raw.strip() and not raw.startswith("#"):
            line, _spark, scala, _shims = raw.split()
            out[line] = ".".join(scala.split(".")[:2])
    return out


def test_python_table_is_the_build_table():
    assert lines.SCALA_OF_LINE == _lines_file()
    assert lmspark.SUPPORTED_LINES == tuple(_lines_file())


@pytest.mark.parametrize("version", ["3.5.0", "3.5.9", "4.0.5", "4.1.4", "4.2.1", "4.3.0", "4.1.0.dev1", "4.3.0rc1"])
def test_spark_line_of_supported_versions(version):
    line = lmspark.spark_line(version)
    assert version.startswith(line + ".")
    assert lines.jar_name(line, lmspark.__version__) == (
        f"lmspark-spark{line}_{lines.SCALA_OF_LINE[line]}-{lmspark.__version__}.jar")


@pytest.mark.parametrize("version", ["3.4.1", "4.4.0", "5.0.0", "2.4.8"])
def test_unsupported_version_names_lines_and_version(version):
    with pytest.raises(lmspark.UnsupportedSparkError) as e:
        lmspark.spark_line(version)
    msg = str(e.value)
    assert version in msg
    for line in lmspark.SUPPORTED_LINES:
        assert line in msg


def test_spark_line_is_the_installed_pysparks():
    import pyspark

    assert lmspark.spark_line() == ".".join(pyspark.__version__.split(".")[:2])


def test_enable_lm_refuses_an_unsupported_pyspark_and_leaves_the_builder(monkeypatch):
    monkeypatch.setattr(lmspark, "_pyspark_version", lambda: "4.4.0")
    monkeypatch.delenv("LMSPARK_JAR", raising=False)
    builder = SparkSession.builder
    before = dict(builder._options)
    with pytest.raises(lmspark.UnsupportedSparkError, match="4.4.0"):
        lmspark.enable_lm(builder)
    assert builder._options == before


def test_missing_jar_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.delenv("LMSPARK_JAR", raising=False)
    (tmp_path / "jars").mkdir()
    monkeypatch.setattr(lmspark, "_HERE", tmp_path)
    with pytest.raises(FileNotFoundError) as e:
        lmspark.jar_path()
    assert "wheel" in str(e.value) and lmspark.spark_line() in str(e.value)


def test_enable_lm_on_a_running_session_raises_and_the_session_still_works(spark):
    builder = SparkSession.builder
    before = dict(builder._options)
    with pytest.raises(lmspark.SessionAlreadyRunningError) as e:
        lmspark.enable_lm(builder)
    assert "spark.stop()" in str(e.value)
    assert builder._options == before
    assert spark.range(3).count() == 3
    assert spark.sql("select 1 + 1").collect()[0][0] == 2


def test_enable_lm_on_a_remote_builder_raises(monkeypatch):
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    builder = SparkSession.builder.config("spark.remote", "sc://localhost:15002")
    try:
        with pytest.raises(RuntimeError, match="Spark Connect"):
            lmspark.enable_lm(builder)
        assert "spark.jars" not in builder._options or lmspark.jar_path() not in builder._options["spark.jars"]
    finally:
        builder._options.pop("spark.remote", None)


@pytest.mark.parametrize("how", ["SPARK_REMOTE", "spark.api.mode", "Connect builder"])
def test_enable_lm_on_every_kind_of_connect_builder_raises(monkeypatch, how):
    """Whatever makes the builder a Spark Connect client, enable_lm raises before touching it."""
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    builder = SparkSession.builder
    if how == "SPARK_REMOTE":
        monkeypatch.setenv("SPARK_REMOTE", "sc://localhost:15002")
    elif how == "spark.api.mode":
        if lmspark.spark_line() == "3.5":
            pytest.skip("Spark 3.5 has no API modes")
        builder = builder.config("spark.api.mode", "connect")
    else:
        try:
            from pyspark.sql.connect.session import SparkSession as RemoteSparkSession
        except ImportError as e:
            pytest.skip(f"the Spark Connect client cannot be imported here: {e}")
        builder = RemoteSparkSession.builder
    before = dict(builder._options)
    with pytest.raises(lmspark.RemoteSessionError, match="python -m lmspark.connect") as e:
        lmspark.enable_lm(builder)
    assert f"spark.sql.extensions={lmspark.EXTENSION_CLASS}" in str(e.value)
    assert builder._options == before


def test_a_classic_builder_is_not_a_connect_one(monkeypatch):
    from lmspark.sessions import connect_target

    for var in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_API_MODE", "SPARK_CONNECT_MODE"):
        monkeypatch.delenv(var, raising=False)
    assert connect_target(SparkSession.builder.master("local[1]")) is None
    assert connect_target(SparkSession.builder.config("spark.api.mode", "classic")) is None


# --------------------------------------------------------------------------------------------
# lmspark.status(spark): a classic session (tests/test_connect.py has Connect's)
# --------------------------------------------------------------------------------------------


def test_status_of_a_classic_session(spark):
    from conftest import conf

    st = lmspark.status(spark)
    assert st.active and st.loaded and st.configured and st.enabled and not st.connect, st
    assert st.spark_version == spark.version and not st.unknown_flags and not st.reason
    assert st.explain_section == (lmspark.spark_line() in lmspark.LINES_WITH_EXPLAIN_PROVIDERS)
    with conf(spark, {lmspark.conf.ENABLED: "false"}):
        off = lmspark.status(spark)
    assert off.loaded and not off.active and lmspark.conf.ENABLED in off.reason, off


def test_unknown_flag_refused_in_a_classic_session_as_from_a_client(spark, tmp_path):
    """The same refusal as a Spark Connect client gets (test_connect.py): the first Parquet scan
    planned fails naming the key and the closest flag; other queries run."""
    from pyspark.errors import IllegalArgumentException

    from conftest import conf

    path = str(tmp_path / "t")
    spark.range(100).write.parquet(path)
    with conf(spark, {"spark.lmspark.batchsize": "64"}):
        with pytest.raises(IllegalArgumentException, match="did you mean spark.lmspark.batchSize"):
            spark.read.parquet(path).where("id > 3").collect()
        assert spark.range(5).count() == 5
        st = lmspark.status(spark)
        assert st.unknown_flags == {"spark.lmspark.batchsize": lmspark.conf.BATCH_SIZE} and not st.active
    assert spark.read.parquet(path).where("id > 3").count() == 96


# --------------------------------------------------------------------------------------------
# lmspark.explain(df) and lmspark.metrics(df)
# --------------------------------------------------------------------------------------------


def test_explain_and_metrics_of_a_served_scan(spark, tmp_path):
    path = str(tmp_path / "t")
    spark.range(0, 20_000, 1, 2).selectExpr("id", "id % 13 as k").write.parquet(path)
    df = spark.read.parquet(path).where("k = 3")
    rows = df.collect()
    e = lmspark.explain(df)
    assert e.active and e.served and not e.reasons, e
    assert "LmParquetScan" in str(e)
    m = lmspark.metrics(df)
    assert m["scans"] == 1 and m["lmFilesRead"] == 2, m
    assert m.get("rowsMaterialized", len(rows)) >= len(rows)


def test_explain_of_a_declined_scan_names_the_column(spark, tmp_path):
    from pyspark.ml.linalg import Vectors

    path = str(tmp_path / "udt")
    spark.createDataFrame([(i, Vectors.dense([float(i)])) for i in range(10)], ["id", "vec"]).write.parquet(path)
    df = spark.read.parquet(path)
    df.collect()
    e = lmspark.explain(df)
    assert e.active and not e.served
    assert any("vec" in r for r in e.reasons), e.reasons
    assert lmspark.metrics(df)["scans"] == 0


def test_explain_gives_per_file_reasons_after_an_action(spark, tmp_path):
    """A file lmspark hands to Spark's reader (a FLOAT16 column read as binary: lmspark leaves the
    logical type to Spark, which reads its bytes) shows its reason and file count."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if lmspark.spark_line() == "3.5":
        pytest.skip("Spark 3.5's parquet-java 1.13 does not know the FLOAT16 logical type")
    path = tmp_path / "half"
    path.mkdir()
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64()),
                             "h": pa.array(np.arange(100, dtype=np.float16))}), path / "h.parquet")
    pq.write_table(pa.table({"id": pa.array(range(100, 200), pa.int64()),
                             "h": pa.array([b"ab"] * 100, pa.binary(2))}), path / "plain.parquet")
    df = spark.read.schema("id long, h binary").parquet(str(path))
    assert len(df.collect()) == 200
    e = lmspark.explain(df)
    assert e.served
    (scan,) = e.scans
    assert any("FLOAT16" in r or "float16" in r.lower() for r in scan.file_reasons), scan
    assert sum(scan.file_reasons.values()) == 1
    m = lmspark.metrics(df)
    assert m["filesFallback"] == 1 and m["lmFilesRead"] == 1, m
