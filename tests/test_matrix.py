"""The type x encoding x codec x nulls x page-version matrix, written by pyarrow.

One folder (one table) per (codec, data page version) holds one file per
(encoding, null mode) cell, each with every supported type as a column, many small pages and
several row groups; queries run per folder, and on a mismatch the failing files are named.
Every expectation is vanilla Spark's answer on the same files (see conftest).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import arrow_oracle
import datagen
import lmspark
from collections import Counter
from conftest import (
    conf,
    BATCH_SIZE_KEY,
    LM_NODE,
    assert_same_answer,
    assert_same_answer_and_lm_used,
    assert_same_answer_lm_or_fallback,
    fallback_reasons,
    lm_status,
    run_query,
    run_query_full,
    LM_CONF,
    REFERENCE_CONF,
)

CODECS = ["none", "snappy", "gzip", "zstd"]
PAGE_VERSIONS = ["1.0", "2.0"]
ENCODINGS = ["plain", "dict", "dict_overflow"]
NULL_MODES = ["required", "none", "some", "all"]
ROWS = 2500

CELLS = [(c, v) for c in CODECS for v in PAGE_VERSIONS]
CELL_IDS = [f"{c}-v{v[0]}" for c, v in CELLS]


def _write_cell_files(folder: Path, codec: str, version: str, seed: int) -> None:
    for ni, nulls in enumerate(NULL_MODES):
        table = datagen.make_table(datagen.SUPPORTED_COLUMNS, ROWS, seed * 100 + ni, nulls)
        for enc in ENCODINGS:
            opts = dict(
                compression=codec,
                data_page_version=version,
                use_dictionary=(enc != "plain"),
                # page indexes on v2 folders only, so both with and without are covered
                write_page_index=(version == "2.0"),
            )
            if enc == "dict_overflow":
                # The dictionary outgrows its limit mid-chunk: pages switch from dictionary to PLAIN.
                opts["dictionary_pagesize_limit"] = 256
            datagen.write(table, folder / f"{enc}-{nulls}.parquet", **opts)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> dict[tuple[str, str], Path]:
    root = tmp_path_factory.mktemp("matrix")
    out = {}
    for i, (codec, version) in enumerate(CELLS):
        folder = root / f"{codec}-v{version[0]}"
        _write_cell_files(folder, codec, version, seed=1000 + i)
        out[(codec, version)] = folder
    return out


def _view(spark, folder: Path, name: str = "m") -> str:
    spark.read.parquet(str(folder)).createOrReplaceTempView(name)
    return name


def _per_file_diagnosis(spark, folder: Path, make_query, **kw) -> str:
    """When a folder-wide comparison fails, which files fail on their own?"""
    bad = []
    for f in sorted(folder.glob("*.parquet")):
        try:
            assert_same_answer(spark, make_query(str(f)), **kw)
        except AssertionError as e:
            bad.append(f"{f.name}: {str(e).splitlines()[0]}")
        except Exception as e:  # noqa: BLE001 - report, do not hide
            bad.append(f"{f.name}: {type(e).__name__}: {str(e)[:300]}")
    return "failing files on their own:\n  " + ("\n  ".join(bad) if bad else "(none)")


def _check_folder(spark, folder: Path, make_query, require_lm: bool = True, **kw) -> str:
    """Same answer (and LmParquetScan) on the whole folder; name the failing files if not."""
    check = assert_same_answer_and_lm_used if require_lm else assert_same_answer
    try:
        return check(spark, make_query(str(folder)), **kw)
    except AssertionError as e:
        raise AssertionError(f"{e}\n{_per_file_diagnosis(spark, folder, make_query, **kw)}") from None


SUPPORTED = list(datagen.SUPPORTED_COLUMNS)

QUERIES = {
    "select_star": lambda p: (lambda s: s.read.parquet(p)),
    "projection": lambda p: (lambda s: s.read.parquet(p).select("c_string", "c_long", "c_ts_ms", "c_bool")),
    "single_column": lambda p: (lambda s: s.read.parquet(p).select("c_binary")),
    "filter": lambda p: (
        lambda s: s.read.parquet(p).where(
            "(c_int > 0 AND c_string >= 'm') OR c_long = 0 OR c_date < DATE'1700-01-01'"
            " OR c_ts_us >= TIMESTAMP'9000-01-01 00:00:00' OR c_binary = X'00'"
            " OR (c_double IS NULL AND c_float > 1.0)"
        )
    ),
    "filter_nulls": lambda p: (
        lambda s: s.read.parquet(p).where("c_string IS NULL AND c_ntz_us IS NOT NULL").select("c_ntz_us", "c_int")
    ),
    "count": lambda p: (lambda s: s.read.parquet(p).groupBy().count()),
    "aggregates": lambda p: (
        lambda s: s.read.parquet(p)
        .where("c_int >= -1000")
        .selectExpr(
            "count(*)", "count(c_string)", "sum(c_long % 1000)", "min(c_date)", "max(c_ts_us)",
            "max(length(c_string))", "sum(length(c_binary))", "count(distinct c_bool)",
        )
    ),
}


@pytest.mark.parametrize("cell", CELLS, ids=CELL_IDS)
@pytest.mark.parametrize("query", list(QUERIES))
def test_matrix(spark, matrix, cell, query):
    folder = matrix[cell]
    _check_folder(spark, folder, QUERIES[query])


@pytest.mark.parametrize("cell", CELLS, ids=CELL_IDS)
def test_matrix_row_count_matches_pyarrow(spark, matrix, cell):
    folder = matrix[cell]
    with_lm = spark.read.parquet(str(folder))
    rows, plan, _ = run_query(spark, lambda s: s.read.parquet(str(folder)).groupBy().count(), LM_CONF)
    assert LM_NODE in plan, lm_status(plan)
    ((count,),) = list(rows)
    assert count == datagen.row_count(folder)
    assert with_lm.columns == SUPPORTED


@pytest.mark.parametrize("cell", [("zstd", "2.0"), ("none", "1.0")], ids=["zstd-v2", "none-v1"])
def test_matrix_tiny_batches_and_splits(spark, matrix, cell):
    """Batch boundaries inside pages, and files split across tasks (row groups by midpoint)."""
    folder = matrix[cell]
    split = {"spark.sql.files.maxPartitionBytes": "16384", "spark.sql.files.openCostInBytes": "1024"}
    for query in ("select_star", "filter", "count"):
        _check_folder(spark, folder, QUERIES[query], lm_conf={BATCH_SIZE_KEY: "7"}, common_conf=split)


def test_matrix_sql_view(spark, matrix):
    """The same through SQL and a temp view, with the columns in another order."""
    folder = matrix[("gzip", "1.0")]
    _view(spark, folder, "mview")
    assert_same_answer_and_lm_used(
        spark,
        "SELECT c_binary, c_ntz_ms, c_int, c_string FROM mview WHERE c_bool OR c_int IS NULL ORDER BY c_int",
    )


# --------------------------------------------------------------------------------------------
# Partitioned tables
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("partitioned") / "t"
    parts = [("1", "a"), ("1", "b c"), ("2", "a"), ("-5", "__HIVE_DEFAULT_PARTITION__"), ("__HIVE_DEFAULT_PARTITION__", "z")]
    for i, (k, s) in enumerate(parts):
        table = datagen.make_table(datagen.SUPPORTED_COLUMNS, 700, 77 + i, "some")
        for j in range(2):
            datagen.write(
                table.slice(j * 350, 350),
                root / f"k={k}" / f"s={s}" / f"part-{j}.parquet",
                use_dictionary=bool(j),
                compression="zstd" if j else "snappy",
                row_group_size=200,
            )
    return root


PARTITION_QUERIES = {
    "select_star": lambda p: (lambda s: s.read.parquet(p)),
    "partition_filter": lambda p: (lambda s: s.read.parquet(p).where("k = 1 AND s <> 'a'")),
    "partition_null": lambda p: (lambda s: s.read.parquet(p).where("k IS NULL OR s IS NULL").select("s", "k", "c_int")),
    "data_and_partition_filter": lambda p: (lambda s: s.read.parquet(p).where("k >= 1 AND c_long > 0").select("k", "c_long", "s")),
    "only_partition_columns": lambda p: (lambda s: s.read.parquet(p).select("s", "k")),
    "group_by_partition": lambda p: (lambda s: s.read.parquet(p).groupBy("k", "s").count()),
}


@pytest.mark.parametrize("query", list(PARTITION_QUERIES))
def test_partitioned_table(spark, partitioned, query):
    assert_same_answer_and_lm_used(spark, PARTITION_QUERIES[query](str(partitioned)))


def test_partition_columns_are_appended(spark, partitioned):
    df = spark.read.parquet(str(partitioned))
    assert df.columns == SUPPORTED + ["k", "s"]
    rows, plan, cols = run_query(spark, lambda s: s.read.parquet(str(partitioned)).groupBy("k", "s").count(), LM_CONF)
    assert LM_NODE in plan
    # Counts per partition come from pyarrow's footers.
    expected = {}
    for f in partitioned.rglob("*.parquet"):
        k = f.parent.parent.name.split("=", 1)[1]
        s = f.parent.name.split("=", 1)[1]
        key = (None if k == "__HIVE_DEFAULT_PARTITION__" else int(k), None if s == "__HIVE_DEFAULT_PARTITION__" else s)
        expected[key] = expected.get(key, 0) + datagen.row_count(f)
    assert {(k, s): n for (k, s, n) in rows.elements()} == expected


# --------------------------------------------------------------------------------------------
# Schema evolution: columns missing from some files read as nulls
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def evolving(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("evolving")
    rng = random.Random(5)
    n = 1500

    def ints(k):
        return [rng.randint(-100, 100) if rng.random() > 0.1 else None for _ in range(k)]

    def strs(k):
        return [rng.choice(["x", "yy", "", "zzz", None, "ünï"]) for _ in range(k)]

    def dbls(k):
        return [rng.random() if rng.random() > 0.2 else None for _ in range(k)]

    t1 = pa.table({"id": pa.array(range(n), pa.int32()), "a": pa.array(strs(n))})
    t2 = pa.table({"id": pa.array(range(n, 2 * n), pa.int32()), "a": pa.array(strs(n)), "b": pa.array(dbls(n))})
    t3 = pa.table({"b": pa.array(dbls(n)), "id": pa.array(range(2 * n, 3 * n), pa.int32()), "c": pa.array(ints(n), pa.int64())})
    datagen.write(t1, root / "f1.parquet")
    datagen.write(t2, root / "f2.parquet", use_dictionary=False, data_page_version="2.0")
    datagen.write(t3, root / "f3.parquet", compression="zstd")
    return root


def test_merge_schema_missing_columns_are_null(spark, evolving):
    q = lambda s: s.read.option("mergeSchema", "true").parquet(str(evolving))  # noqa: E731
    assert_same_answer_and_lm_used(spark, q)
    df = spark.read.option("mergeSchema", "true").parquet(str(evolving))
    assert set(df.columns) == {"id", "a", "b", "c"}
    # Per pyarrow: rows of files without column b.
    no_b = pq.ParquetFile(str(evolving / "f1.parquet")).metadata.num_rows
    rows, plan, _ = run_query(spark, lambda s: q(s).where("b IS NULL AND id < 1500").groupBy().count(), LM_CONF)
    assert LM_NODE in plan
    assert list(rows) == [(no_b,)]


def test_explicit_schema_with_absent_column(spark, evolving):
    schema = "c long, id int, zz string, a string, b double"
    assert_same_answer_and_lm_used(spark, lambda s: s.read.schema(schema).parquet(str(evolving)))
    assert_same_answer_and_lm_used(
        spark, lambda s: s.read.schema(schema).parquet(str(evolving)).where("zz IS NULL AND c > 0").select("zz", "c", "id")
    )
    rows, plan, _ = run_query(
        spark, lambda s: s.read.schema(schema).parquet(str(evolving)).where("zz IS NOT NULL").groupBy().count(), LM_CONF
    )
    assert list(rows) == [(0,)]


def test_explicit_schema_type_widening(spark, evolving):
    """int -> long and float -> double widening as Spark allows; same answer, or both fail."""
    schema = "id long, b double, c long"
    _same_outcome(spark, lambda s: s.read.schema(schema).parquet(str(evolving)))


def _same_outcome(spark, query, common_conf: dict | None = None, lm_conf: dict | None = None):
    """If vanilla Spark can answer, lmspark gives the same answer (served or cleanly declined);
    if vanilla fails, lmspark fails as well. Returns the lmspark plan, or 'vanilla fails: ...'."""
    common = dict(common_conf or {})
    try:
        run_query(spark, query, {**common, **REFERENCE_CONF})
    except Exception as ref_error:  # noqa: BLE001
        with pytest.raises(Exception):
            run_query(spark, query, {**common, **LM_CONF, **(lm_conf or {})})
        return f"vanilla fails: {str(ref_error).splitlines()[0][:200]}"
    return assert_same_answer_lm_or_fallback(spark, query, common_conf=common, lm_conf=lm_conf)


# --------------------------------------------------------------------------------------------
# Files lmspark hands to Spark's reader (per file), mixed with files it reads itself
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_encodings(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mixed_encodings")
    t = datagen.make_table(datagen.SUPPORTED_COLUMNS, 2000, 4242, "some")
    datagen.write(t, root / "0-plain.parquet", use_dictionary=False)
    datagen.write(t, root / "1-dict.parquet", use_dictionary=True, compression="gzip")
    datagen.write(
        t, root / "2-delta-ints.parquet", use_dictionary=False,
        column_encoding={"c_int": "DELTA_BINARY_PACKED", "c_long": "DELTA_BINARY_PACKED",
                         "c_date": "DELTA_BINARY_PACKED", "c_ts_us": "DELTA_BINARY_PACKED"},
    )
    datagen.write(
        t, root / "3-delta-strings-v2.parquet", use_dictionary=False, data_page_version="2.0",
        column_encoding={"c_string": "DELTA_LENGTH_BYTE_ARRAY", "c_binary": "DELTA_BYTE_ARRAY",
                         "c_ntz_ms": "DELTA_BINARY_PACKED"},
    )
    datagen.write(t.slice(0, 0), root / "5-empty.parquet")
    # only some columns delta-encoded, the rest dictionary: the per-file decision is per file
    datagen.write(
        t, root / "6-dict-and-delta.parquet", use_dictionary=["c_string", "c_double"],
        column_encoding={"c_long": "DELTA_BINARY_PACKED"},
    )
    return root


MIXED_QUERIES = ["select_star", "projection", "filter", "count", "aggregates"]


@pytest.mark.parametrize("query", MIXED_QUERIES)
def test_mixed_encodings_fall_back_per_file(spark, mixed_encodings, query):
    _check_folder(spark, mixed_encodings, QUERIES[query])


@pytest.mark.parametrize(
    "name", ["2-delta-ints.parquet", "3-delta-strings-v2.parquet", "5-empty.parquet"]
)
def test_single_fallback_file(spark, mixed_encodings, name):
    """A DELTA-encoded file or an empty file, alone: LmParquetScan in the plan, same answer."""
    path = str(mixed_encodings / name)
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(path))
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(path).groupBy().count())


def test_byte_stream_split_same_outcome(spark, tmp_path):
    """BYTE_STREAM_SPLIT FLOAT / DOUBLE / INT32 / INT64 / FIXED_LEN_BYTE_ARRAY (Parquet 2.11),
    written by pyarrow: lmspark reads it. Where vanilla Spark can read it too, same answer; Spark
    4.1's vectorized reader cannot, and then the reference is Spark's row-based (parquet-mr) reader."""
    cols = {"c_float": pa.float32(), "c_double": pa.float64(), "c_int": pa.int32(), "c_long": pa.int64(),
            "c_fixed": pa.binary(5), "c_dec": pa.decimal128(12, 2)}
    t = datagen.make_table(cols, 1500, 4343, "some")
    path = str(datagen.write(
        t, tmp_path / "bss.parquet", use_dictionary=False, compression="zstd",
        column_encoding={c: "BYTE_STREAM_SPLIT" for c in cols},
    ))
    query = lambda s: s.read.parquet(path)  # noqa: E731
    row_reader = {"spark.sql.parquet.enableVectorizedReader": "false"}
    try:
        run_query(spark, query, REFERENCE_CONF)
    except Exception:  # noqa: BLE001
        try:
            run_query(spark, query, {**REFERENCE_CONF, **row_reader})
        except Exception:  # noqa: BLE001
            # Neither of the line's readers reads it (3.5's parquet-java has BYTE_STREAM_SPLIT for
            # FLOAT and DOUBLE only): pyarrow is the oracle.
            run = run_query_full(spark, query, LM_CONF)
            assert LM_NODE in run.plan, run.plan
            assert Counter(run.rows) == arrow_oracle.expected_rows(Path(path), run.schema)
        else:
            assert_same_answer_and_lm_used(
                spark, query, common_conf=row_reader, lm_conf={"spark.sql.parquet.enableVectorizedReader": "true"}
            )
    else:
        assert_same_answer_and_lm_used(spark, query)
    rows, _, _ = run_query(spark, query, LM_CONF)
    assert sum(rows.values()) == datagen.row_count(Path(path))


@pytest.fixture(scope="module")
def int96(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("int96")
    cols = {"c_int": pa.int32(), "c_ts_us": pa.timestamp("us", tz="UTC"), "c_string": pa.string()}
    for i in range(2):
        t = datagen.make_table(cols, 1500, 96 + i, "some")
        datagen.write(t, root / f"int96-{i}.parquet", use_deprecated_int96_timestamps=True, use_dictionary=bool(i))
    t = datagen.make_table(cols, 1500, 98, "some")
    datagen.write(t, root / "int64.parquet")
    return root


def test_int96_timestamps(spark, int96):
    assert pq.ParquetFile(str(int96 / "int96-0.parquet")).schema.column(1).physical_type == "INT96"
    for q in ("select_star", "count"):
        _check_folder(spark, int96, QUERIES[q])
    _check_folder(spark, int96, lambda p: (lambda s: s.read.parquet(p).where("c_ts_us > TIMESTAMP'2000-01-01 00:00:00'")))


# --------------------------------------------------------------------------------------------
# Dates and timestamps that need Julian/Gregorian rebasing, under each rebase mode
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ancient(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ancient")
    epoch = dt.date(1970, 1, 1)
    days = [(dt.date(y, m, d) - epoch).days for y, m, d in
            [(1, 1, 1), (1000, 3, 1), (1582, 10, 4), (1582, 10, 15), (1600, 2, 29), (1899, 12, 31), (1970, 1, 1)]]
    us = [(int((dt.datetime(y, 1, 1, 12, 30) - dt.datetime(1970, 1, 1)).total_seconds()) * 10**6 + 123)
          for y in (1, 1000, 1582, 1850, 1899, 1900, 1901, 2000)]
    n = 56
    t = pa.table({
        "d": pa.array([days[i % len(days)] for i in range(n)], pa.date32()),
        "ts": pa.array([us[i % len(us)] for i in range(n)], pa.timestamp("us", tz="UTC")),
        "i": pa.array(range(n), pa.int32()),
    })
    datagen.write(t, root / "ancient.parquet", row_group_size=20, data_page_size=64, write_batch_size=8)
    return root


@pytest.mark.parametrize("mode", ["CORRECTED", "LEGACY", "EXCEPTION"])
def test_rebase_modes(spark, ancient, mode):
    common = {"spark.sql.parquet.datetimeRebaseModeInRead": mode, "spark.sql.parquet.int96RebaseModeInRead": mode}
    outcome = _same_outcome(spark, lambda s: s.read.parquet(str(ancient)), common_conf=common)
    if mode != "EXCEPTION":
        assert not str(outcome).startswith("vanilla fails"), outcome


# --------------------------------------------------------------------------------------------
# Other flat types (tinyint, smallint, unsigned, decimals, fixed-size binary): lmspark may serve
# them or decline cleanly, with the same answer either way.
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def other_types(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("other_types")
    for i, (enc, version) in enumerate([(False, "1.0"), (True, "1.0"), (True, "2.0"), (False, "2.0")]):
        t = datagen.make_table(datagen.OTHER_FLAT_COLUMNS, 1500, 300 + i, "some")
        datagen.write(t, root / f"other-{i}.parquet", use_dictionary=enc, data_page_version=version)
    return root


@pytest.mark.parametrize("column", list(datagen.OTHER_FLAT_COLUMNS))
def test_other_flat_types(spark, other_types, column):
    plan = assert_same_answer_lm_or_fallback(spark, lambda s: s.read.parquet(str(other_types)).select("c_int8", column))
    assert_same_answer_lm_or_fallback(
        spark, lambda s: s.read.parquet(str(other_types)).where(f"`{column}` IS NOT NULL").select(column)
    )
    print(f"{column}: {lm_status(plan)}")


def test_decimals_served_or_declined(spark, other_types):
    plan = assert_same_answer_lm_or_fallback(
        spark, lambda s: s.read.parquet(str(other_types)).where("c_dec_9_2 > 0").select("c_dec_9_2", "c_dec_18_4", "c_dec_30_5")
    )
    if LM_NODE not in plan:
        assert any("dec" in r.lower() for r in fallback_reasons(plan)), plan


# --------------------------------------------------------------------------------------------
# Filters: lmspark with Parquet pushdown on (row-group and page pruning) against the data itself
# --------------------------------------------------------------------------------------------

FILTERS = [
    "c_double = 0.0",  # must match -0.0 as well: stats pruning on signed zeros
    "c_float = -0.0",
    "c_double > 0",
    "c_float < 0",
    "isnan(c_double)",
    "c_double = double('NaN')",
    "c_float > float('-inf') AND c_float < float('inf')",
    "c_double >= 1.0E300",
    "c_int = 2147483647 OR c_int = -2147483648",
    "c_long < -9223372036854775000",
    "c_int IN (0, 1, -1, 42)",
    "c_int BETWEEN -1000 AND 1000",
    "NOT (c_int > 5)",
    "c_int <=> NULL",
    "c_int IS NULL AND c_long IS NOT NULL",
    "c_bool",
    "NOT c_bool",
    "c_bool IS NULL",
    "c_string = ''",
    "c_string IN ('a', 'A', '😀', 'null')",
    "c_string LIKE 'a%'",
    "c_string > 'zzz'",
    "c_string < ' '",
    "c_string = 'e\u0301'",
    "length(c_string) > 100",
    "c_binary = X''",
    "c_binary IS NOT NULL AND length(c_binary) = 0",
    "c_date = DATE'9999-12-31'",
    "c_date < DATE'1600-01-01'",
    "c_date >= DATE'1970-01-01' AND c_date < DATE'1971-01-01'",
    "c_ts_us = TIMESTAMP'1970-01-01 00:00:00'",
    "c_ts_us < TIMESTAMP'1902-01-01 00:00:00'",
    "c_ts_ms > TIMESTAMP'9990-01-01 00:00:00'",
    "c_ntz_us = TIMESTAMP_NTZ'1969-12-31 23:59:59.999999'",
    "c_ntz_ms <= TIMESTAMP_NTZ'1950-01-01 00:00:00'",
    "c_int > 0 OR c_string IS NULL",
    "c_long % 7 = 3",
]


@pytest.fixture(scope="module")
def filter_folder(matrix, tmp_path_factory) -> Path:
    """Files from two matrix folders (page indexes on and off) in one table."""
    import shutil

    root = tmp_path_factory.mktemp("filters")
    for cell in (("zstd", "2.0"), ("snappy", "1.0")):
        for f in matrix[cell].glob("*.parquet"):
            shutil.copy(f, root / f"{cell[0]}-{cell[1]}-{f.name}")
    return root


@pytest.mark.parametrize("predicate", FILTERS)
def test_filter(spark, filter_folder, predicate):
    p = str(filter_folder)
    assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(p).where(predicate).select("c_int", "c_long", "c_double", "c_string", "c_date"))


# --------------------------------------------------------------------------------------------
# Read options that change how Parquet types map to Spark types
# --------------------------------------------------------------------------------------------

READ_CONFS = {
    "binaryAsString": {"spark.sql.parquet.binaryAsString": "true"},
    "no_ntz_inference": {"spark.sql.parquet.inferTimestampNTZ.enabled": "false"},
    "case_sensitive": {"spark.sql.caseSensitive": "true"},
    "offheap_vectors": {"spark.sql.columnVector.offheap.enabled": "true"},
    "no_codegen_batch_limit": {"spark.sql.codegen.maxFields": "5"},
    "small_spark_batch": {"spark.sql.parquet.columnarReaderBatchSize": "13"},
}


@pytest.mark.parametrize("name", list(READ_CONFS))
def test_read_confs(spark, matrix, name):
    folder = str(matrix[("snappy", "2.0")])
    _same_outcome(spark, lambda s: s.read.parquet(folder), common_conf=READ_CONFS[name])
    _same_outcome(spark, lambda s: s.read.parquet(folder).where("c_int > 0").select("c_binary", "c_ntz_ms"), common_conf=READ_CONFS[name])


READ_SCHEMAS = {
    "int_as_long": "c_int long",
    "int_as_double": "c_int double",
    "int_as_decimal": "c_int decimal(20, 0)",
    "float_as_double": "c_float double",
    "date_as_ntz": "c_date timestamp_ntz",
    "long_as_int": "c_long int",
    "int_as_string": "c_int string",
    "string_as_binary": "c_string binary",
    "binary_as_string": "c_binary string",
    "ntz_as_ltz": "c_ntz_us timestamp",
    "ltz_as_ntz": "c_ts_us timestamp_ntz",
    "renamed_case": "C_INT int, c_String string",
}


@pytest.mark.parametrize("name", list(READ_SCHEMAS))
def test_read_schema(spark, matrix, name):
    """A user schema that differs from the file's: same answer as Spark, or both fail."""
    folder = str(matrix[("gzip", "2.0")])
    _same_outcome(spark, lambda s: s.read.schema(READ_SCHEMAS[name]).parquet(folder))


def test_dynamic_partition_pruning(spark, partitioned, tmp_path):
    """A partitioned fact table joined to a filtered dimension: the scan gets a dynamic partition
    filter at run time; same answer, and lmspark serves the fact scan."""
    dim = tmp_path / "dim"
    spark.createDataFrame([(1, "one"), (2, "two"), (3, "three")], "k int, label string").write.parquet(str(dim))
    sql = (
        f"SELECT d.label, f.s, count(*), sum(f.c_long % 100) FROM parquet.`{partitioned}` f "
        f"JOIN parquet.`{dim}` d ON f.k = d.k WHERE d.label = 'two' GROUP BY d.label, f.s"
    )
    common = {
        "spark.sql.optimizer.dynamicPartitionPruning.enabled": "true",
        "spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly": "false",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
    }
    for aqe in ("true", "false"):
        plan = assert_same_answer_and_lm_used(spark, sql, common_conf={**common, "spark.sql.adaptive.enabled": aqe})
        assert "dynamicpruning" in plan.lower(), plan


def test_ignore_missing_files(spark, tmp_path):
    """A file deleted between listing and reading: with ignoreMissingFiles lmspark skips it as
    Spark does; without, both fail."""
    folder = tmp_path / "missing"
    for i in range(3):
        datagen.write(datagen.make_table(datagen.SUPPORTED_COLUMNS, 500, 900 + i, "some"), folder / f"f{i}.parquet")
    with conf(spark, LM_CONF):
        listed = spark.read.parquet(str(folder))  # lists the three files now
    (folder / "f1.parquet").unlink()

    def fresh(_s):
        return listed.select("*")  # a new Dataset, planned anew, over the same file listing

    assert_same_answer_and_lm_used(spark, fresh, common_conf={"spark.sql.files.ignoreMissingFiles": "true"})
    for settings in (REFERENCE_CONF, LM_CONF):
        with pytest.raises(Exception):
            run_query(spark, fresh, {**settings, "spark.sql.files.ignoreMissingFiles": "false"})


def test_file_truncated_after_listing(spark, tmp_path):
    """A file truncated between listing and reading: vanilla Spark and lmspark both fail, lmspark
    with an error naming the file; with ignoreCorruptFiles, lmspark's scan skips the cut file and the
    answer is Spark's."""
    folder = tmp_path / "truncated"
    for i in range(3):
        datagen.write(datagen.make_table(datagen.SUPPORTED_COLUMNS, 500, 950 + i, "some"), folder / f"f{i}.parquet")
    with conf(spark, LM_CONF):
        listed = spark.read.parquet(str(folder))  # lists the three files (and their sizes) now
    victim = folder / "f1.parquet"
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])

    def fresh(_s):
        return listed.select("*")  # a new Dataset, planned anew, over the same file listing

    error_classes = []
    for settings in (REFERENCE_CONF, LM_CONF):
        with pytest.raises(Exception) as failure:
            run_query(spark, fresh, {**settings, "spark.sql.files.ignoreCorruptFiles": "false"})
        error_classes.append(re.findall(r"\[([A-Z_]+(?:\.[A-Z_]+)*)\]", str(failure.value))[:1])
        if settings is LM_CONF:
            assert str(victim) in str(failure.value), str(failure.value)[:2000]
    # Spark's usual error: the same error class (e.g. FAILED_READ_FILE) with and without lmspark
    # (3.5's message for this failure carries no error class, with or without lmspark).
    assert error_classes[0] == error_classes[1], error_classes
    if lmspark.spark_line() != "3.5":
        assert error_classes[0], error_classes
    assert_same_answer_and_lm_used(spark, fresh, common_conf={"spark.sql.files.ignoreCorruptFiles": "true"})


@pytest.mark.parametrize("batch", ["1", "4095", "100000"])
def test_batch_sizes(spark, mixed_encodings, batch):
    _check_folder(spark, mixed_encodings, QUERIES["select_star"], lm_conf={BATCH_SIZE_KEY: batch})


def test_huge_values(spark, tmp_path):
    """Single values far larger than a page, a batch's usual buffer, or a dictionary page."""
    big = ["x" * (3 * 2**20), "", None, "é" * 700_000, "y"] * 4
    t = pa.table({"s": pa.array(big), "b": pa.array([v.encode() if v else None for v in big], pa.binary()),
                  "i": pa.array(range(len(big)), pa.int32())})
    for dict_ in (False, True):
        path = str(datagen.write(t, tmp_path / f"huge-{dict_}.parquet", use_dictionary=dict_, row_group_size=7))
        assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(path))
        assert_same_answer_and_lm_used(spark, lambda s: s.read.parquet(path).where("length(s) > 10").select("i", "b"))
