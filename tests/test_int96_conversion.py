"""INT96 timestamps from a writer other than parquet-mr, under Spark's
``spark.sql.parquet.int96TimestampConversion`` (Impala-style wall-clock INT96): lmspark must shift
them exactly as vanilla Spark does, and read the file itself."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import assert_same_answer_and_lm_used, run_query, REFERENCE_CONF


@pytest.fixture(scope="module")
def int96_arrow(tmp_path_factory):
    path = tmp_path_factory.mktemp("int96conv") / "arrow-int96.parquet"
    base = dt.datetime(2001, 3, 10, 1, 30)
    ts = [None if i % 11 == 0 else base + dt.timedelta(hours=7 * i, microseconds=i) for i in range(2000)]
    table = pa.table({"i": pa.array(range(2000), pa.int32()), "ts": pa.array(ts, pa.timestamp("us"))})
    for dictionary in (False, True):
        pq.write_table(table, str(path).replace(".parquet", f"-{dictionary}.parquet"),
                       use_deprecated_int96_timestamps=True, use_dictionary=dictionary)
    meta = pq.ParquetFile(str(path).replace(".parquet", "-False.parquet")).metadata
    assert not meta.created_by.startswith("parquet-mr"), meta.created_by
    assert meta.schema.column(1).physical_type == "INT96"
    return path.parent


@pytest.mark.parametrize("tz", ["America/Los_Angeles", "Asia/Kolkata", "UTC"])
def test_int96_timestamp_conversion(spark, int96_arrow, tz):
    common = {"spark.sql.parquet.int96TimestampConversion": "true", "spark.sql.session.timeZone": tz}
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(str(int96_arrow)), common_conf=common)
    if tz != "UTC":
        # the conversion really shifts the values (else this test would prove nothing)
        on, _, _ = run_query(spark, lambda s: s.read.parquet(str(int96_arrow)), {**REFERENCE_CONF, **common})
        off, _, _ = run_query(spark, lambda s: s.read.parquet(str(int96_arrow)),
                              {**REFERENCE_CONF, **common, "spark.sql.parquet.int96TimestampConversion": "false"})
        assert on != off
