"""lmspark through real S3A, against a local S3 server: ``make test-s3a`` (Spark 4.1 by default).

A ``moto_server`` (from the ``moto[server]`` package) is started on 127.0.0.1 by the fixture; the
TPC-H lineitem data of the benchmark (``LMSPARK_S3A_SCALE``, 0.1 by default) is uploaded with boto3;
Spark reads ``s3a://`` paths through ``hadoop-aws`` and the AWS SDK bundle from Maven Central
(``.cache/s3a``, fetched by ``make test-s3a``). For each of the 12 lineitem queries of the benchmark:
lmspark's answer equals vanilla Spark's (row count, and an order-free sum and XOR of row hashes, vanilla with
filter pushdown off), and lmspark's GET requests, counted by S3A's own ``IOStatistics``
(``action_http_get_request``), are at most vanilla Spark's (filter pushdown on, as users run it),
with lmspark's metadata cache off (each query as a first query); run again with the cache on and
after one run that fills it, lmspark makes no more GETs than without it. The times are printed (run
with ``-s``), never asserted.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("LMSPARK_S3A") != "1", reason="S3A suite: run it with `make test-s3a` (LMSPARK_S3A=1)"
)

REPO_ROOT = Path(__file__).resolve().parents[2]
JARS = REPO_ROOT / ".cache" / "s3a"
BUCKET = "lmspark-s3a"
GETS = "action_http_get_request"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint():
    exe = Path(sys.executable).parent / "moto_server"
    if not exe.is_file():
        exe = Path(shutil.which("moto_server") or "moto_server")
    port = _free_port()
    proc = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("moto_server did not start")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def lineitem(endpoint):
    """The lineitem files uploaded to the bucket: (s3a folder, scale)."""
    import boto3

    from lmspark.bench import data

    scale = float(os.environ.get("LMSPARK_S3A_SCALE", "0.1"))
    ds = data.ensure_datasets(["lineitem_default"], scale, data.default_cache_dir())["lineitem_default"]
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="k", aws_secret_access_key="s",
                      region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    for f in sorted(Path(ds.path).glob("*.parquet")):
        s3.upload_file(str(f), BUCKET, f"lineitem/{f.name}")
    return f"s3a://{BUCKET}/lineitem", scale


@pytest.fixture(scope="module")
def s3_spark(endpoint):
    from pyspark.sql import SparkSession

    import lmspark

    jars = sorted(str(p) for p in JARS.glob("*.jar"))
    if len(jars) < 2:
        pytest.fail(f"hadoop-aws and the AWS SDK bundle are missing from {JARS}: run `make test-s3a`")
    b = (
        SparkSession.builder.master("local[2]").appName("lmspark-s3a")
        .config("spark.driver.memory", "4g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraClassPath", ":".join(jars))
        .config("spark.hadoop.fs.s3a.endpoint", endpoint)
        .config("spark.hadoop.fs.s3a.path.style.access", "true")
        .config("spark.hadoop.fs.s3a.connection.ssl.enabled", "false")
        .config("spark.hadoop.fs.s3a.endpoint.region", "us-east-1")
        .config("spark.hadoop.fs.s3a.access.key", "k")
        .config("spark.hadoop.fs.s3a.secret.key", "s")
    )
    session = lmspark.enable_lm(b).getOrCreate()
    yield session
    session.stop()


def _gets(spark, path: str) -> int:
    jvm = spark._jvm
    fs = jvm.org.apache.hadoop.fs.Path(path).getFileSystem(spark._jsc.hadoopConfiguration())
    stats = jvm.org.apache.hadoop.fs.statistics.IOStatisticsSupport.retrieveIOStatistics(fs)
    value = stats.counters().get(GETS)
    return int(value) if value is not None else 0


def _run(spark, path: str, sql: str, settings: dict) -> tuple[tuple, int, float]:
    """((row count, sum and XOR of row hashes), GET requests, seconds) of ``sql`` over the S3 data."""
    for k, v in settings.items():
        spark.conf.set(k, v)
    spark.read.parquet(path).createOrReplaceTempView("lineitem")
    before = _gets(spark, path)
    t0 = time.perf_counter()
    row = spark.sql(f"SELECT count(*) AS n, sum(pmod(xxhash64(*), 2147483647)) AS h, bit_xor(xxhash64(*)) AS x "
                    f"FROM ({sql})").collect()[0]
    secs = time.perf_counter() - t0
    return (row["n"], row["h"], row["x"]), _gets(spark, path) - before, secs


def test_lineitem_queries_through_s3a(s3_spark, lineitem):
    spark = s3_spark
    from lmspark.bench import queries

    path, scale = lineitem
    report = []
    cold = {"spark.lmspark.enabled": "true", "spark.sql.parquet.filterPushdown": "true",
            "spark.lmspark.metadataCache.maxBytes": "0"}
    warm = dict(cold, **{"spark.lmspark.metadataCache.maxBytes": str(128 << 20)})
    for cell in queries.plan(["lineitem_default"], None, scale):
        expected, _, _ = _run(spark, path, cell.sql, {"spark.lmspark.enabled": "false",
                                                      "spark.sql.parquet.filterPushdown": "false"})
        _, vanilla_gets, vanilla_s = _run(spark, path, cell.sql, {"spark.lmspark.enabled": "false",
                                                                  "spark.sql.parquet.filterPushdown": "true"})
        got, lm_gets, lm_s = _run(spark, path, cell.sql, cold)
        _run(spark, path, cell.sql, warm)  # fills the metadata cache
        warm_got, warm_gets, warm_s = _run(spark, path, cell.sql, warm)
        report.append(f"| {cell.query} | {vanilla_s:.2f} | {lm_s:.2f} | {warm_s:.2f} | {vanilla_gets} | {lm_gets} | {warm_gets} |")
        assert got == expected, f"{cell.query}: lmspark {got} vs vanilla {expected}"
        assert warm_got == expected, f"{cell.query}: lmspark with a warm metadata cache {warm_got} vs vanilla {expected}"
        assert lm_gets <= vanilla_gets, f"{cell.query}: lmspark made {lm_gets} GETs, vanilla Spark {vanilla_gets}"
        assert warm_gets <= lm_gets, f"{cell.query}: lmspark made {warm_gets} GETs with a warm cache, {lm_gets} without"
    print(f"\nS3A (moto_server), lineitem SF {scale}: seconds and GET requests per query (one run each; "
          "lmspark cold: metadata cache off; warm: the query's second run with it on)")
    print("| query | vanilla s | lmspark cold s | lmspark warm s | vanilla GETs | lmspark cold GETs | lmspark warm GETs |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(report))
