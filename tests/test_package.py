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
