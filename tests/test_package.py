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
