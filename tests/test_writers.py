"""Files written by real writers -- pyarrow, DuckDB, Spark and parquet-java -- under many
settings, read with lmspark on against an oracle. One test id per writer and setting.

Oracle: vanilla Spark (lmspark off, Parquet filter pushdown off). Where vanilla Spark cannot
read a file (BYTE_STREAM_SPLIT: "Unsupported encoding", BROTLI: "BrotliCodec was not found"),
the values pyarrow reads, converted to what Spark returns (``arrow_oracle``); for DuckDB files
pyarrow rejects, DuckDB's own reading of the file.

Every file here uses only features lmspark reads itself (codecs incl. LZ4 and BROTLI, v1/v2
pages, dictionary, DELTA_* and BYTE_STREAM_SPLIT, INT96, unsigned ints, nanosecond timestamps as
longs, decimals, ENUM/BSON/JSON), so besides the answer each test asserts that lmspark really
read the data: LmParquetScan in the plan, files read > 0, no file handed to Spark's reader, and
every non-empty row group read. A silent fallback does not pass.

The files are written once per module (lazily, per case) under ``tmp_path_factory``.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import io
import json
import random
import shutil
import uuid
import zlib
from collections import Counter
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T

import arrow_oracle
import datagen
from conftest import (
    LM_CONF,
    REFERENCE_CONF,
    assert_lm_read_everything,
    capture_lm_log,
    conf,
    describe_difference,
    error_summary,
    first_column_not_null,
    jvm_alive,
    lm_status,
    normalise,
    reversed_columns,
    run_query_full,
)

ROWS = 2000
NANOS_AS_LONG = {"spark.sql.legacy.parquet.nanosAsLong": "true"}


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """One writer under one setting. ``write(folder, sources)`` writes Parquet file(s) into
    ``folder``; ``schema`` is an explicit read schema (DDL) when Spark cannot infer one;
    ``conf`` applies to both runs; ``duckdb_oracle``: DuckDB may stand in for pyarrow as the
    oracle (for DuckDB's own files)."""

    id: str
    write: Callable[[Path, "Sources"], None]
    schema: str | T.StructType | Callable[[Path], str | T.StructType] | None = None
    conf: tuple[tuple[str, str], ...] = ()
    duckdb_oracle: bool = False

    def read_schema(self, folder: Path) -> str | T.StructType | None:
        return self.schema(folder) if callable(self.schema) else self.schema


CASES: list[Case] = []


def _seed(name: str) -> int:
    return zlib.crc32(name.encode())


# ---- pyarrow --------------------------------------------------------------------------------

#: The flat column types of the codec, page, encoding and row-group cases: every type pyarrow
#: writes that Spark reads, except those with cases of their own (unsigned ints, INT96,
#: nanoseconds), so that each case's failure points at its own feature. The generator makes
#: ~45% of the values from a small pool, so dictionaries stay useful.
CORE_COLUMNS: dict[str, pa.DataType] = {
    **datagen.SUPPORTED_COLUMNS,
    **{k: v for k, v in datagen.OTHER_FLAT_COLUMNS.items() if not k.startswith("c_uint")},
    "c_dec_1_0": pa.decimal128(1, 0),
    "c_dec_38_10": pa.decimal128(38, 10),
    "c_fixed16": pa.binary(16),
}
UNSIGNED_COLUMNS = {k: v for k, v in datagen.OTHER_FLAT_COLUMNS.items() if k.startswith("c_uint")}
UINT64_EDGES = [0, 1, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]


def _with_nulls(values: list, rng: random.Random, nulls: str) -> list:
    if nulls == "all":
        return [None] * len(values)
    if nulls == "some":
        return [None if rng.random() < 0.15 else v for v in values]
    return values


def _extra_columns(n: int, rng: random.Random, nulls: str, unsigned: bool) -> dict[str, pa.Array]:
    """Types datagen does not generate: large_binary, JSON, dictionary-typed columns, uint64."""
    pool = ["", "a", "ß", "中文", "x" * 50] + [f"v{i}" for i in range(20)]
    big = [bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 20))) for _ in range(n)]
    js = [json.dumps({"k": rng.randint(-5, 5), "s": rng.choice(pool)}) for _ in range(n)]
    ds = [rng.choice(pool) for _ in range(n)]
    dl = [rng.choice([0, -1, 2**40, -(2**63), 2**63 - 1, 7]) for _ in range(n)]
    cols = {
        "c_large_binary": pa.array(_with_nulls(big, rng, nulls), pa.large_binary()),
        "c_json": pa.ExtensionArray.from_storage(pa.json_(), pa.array(_with_nulls(js, rng, nulls), pa.string())),
        "c_dict_string": pa.array(_with_nulls(ds, rng, nulls), pa.string()).dictionary_encode(),
        "c_dict_long": pa.array(_with_nulls(dl, rng, nulls), pa.int64()).dictionary_encode(),
    }
    if unsigned:
        u64 = [rng.choice(UINT64_EDGES) if rng.random() < 0.2 else rng.randrange(2**64) for _ in range(n)]
        cols["c_uint64"] = pa.array(_with_nulls(u64, rng, nulls), pa.uint64())
    return cols


def wide_table(seed: int, nulls: str = "some", rows: int = ROWS, unsigned: bool = False) -> pa.Table:
    """CORE_COLUMNS and the extra types; with ``unsigned``, uint8/16/32/64 as well."""
    columns = {**CORE_COLUMNS, **(UNSIGNED_COLUMNS if unsigned else {})}
    t = datagen.make_table(columns, rows, seed, nulls)
    for name, arr in _extra_columns(rows, random.Random(seed + 1), nulls, unsigned).items():
        t = t.append_column(pa.field(name, arr.type, nullable=nulls != "required"), arr)
    return t


def _physical_types(table: pa.Table, **options) -> dict[str, str]:
    """Column -> Parquet physical type, as pyarrow writes the table with these options."""
    buf = io.BytesIO()
    pq.write_table(table.slice(0, 1), buf, **options)
    schema = pq.ParquetFile(io.BytesIO(buf.getvalue())).schema
    return {schema.column(i).name: schema.column(i).physical_type for i in range(len(schema))}


#: Physical types each encoding applies to (Parquet spec; pyarrow enforces the same).
ENCODABLE = {
    "DELTA_BINARY_PACKED": {"INT32", "INT64"},
    "DELTA_LENGTH_BYTE_ARRAY": {"BYTE_ARRAY"},
    "DELTA_BYTE_ARRAY": {"BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"},
    "BYTE_STREAM_SPLIT": {"FLOAT", "DOUBLE", "INT32", "INT64", "FIXED_LEN_BYTE_ARRAY"},
}


def _encoded_columns(table: pa.Table, encoding: str, **options) -> dict[str, str]:
    """Every column whose physical type allows ``encoding`` (dictionary-typed columns aside:
    pyarrow writes those dictionary-encoded)."""
    types = _physical_types(table, **options)
    return {
        name: encoding
        for name, phys in types.items()
        if phys in ENCODABLE[encoding] and not pa.types.is_dictionary(table.schema.field(name).type)
    }


def _pyarrow_case(case_id: str, make_table: Callable[[int], pa.Table], **options):
    def write(folder: Path, _sources: "Sources") -> None:
        table = make_table(_seed(case_id))
        opts = dict(options)
        encoding = opts.pop("encoding", None)
        if encoding:
            opts["use_dictionary"] = [f.name for f in table.schema if pa.types.is_dictionary(f.type)]
            opts["column_encoding"] = _encoded_columns(
                table, encoding, store_decimal_as_integer=opts.get("store_decimal_as_integer", False)
            )
        datagen.write(table, folder / "data.parquet", **opts)

    return write


def _add_pyarrow(case_id: str, make_table=wide_table, read_conf: dict | None = None, **options) -> None:
    """A pyarrow case: ``make_table(seed)`` written with ``pq.write_table`` options (plus
    ``encoding``: that encoding on every column that allows it), read with ``read_conf``."""
    CASES.append(Case(f"pyarrow-{case_id}", _pyarrow_case(f"pyarrow-{case_id}", make_table, **options),
                      conf=tuple((read_conf or {}).items())))


# codecs x data page versions; pyarrow's "lz4" is LZ4_RAW
for _codec in ["none", "snappy", "gzip", "zstd", "lz4", "brotli"]:
    for _version in ["1.0", "2.0"]:
        _add_pyarrow(f"{_codec}-v{_version[0]}", compression=_codec, data_page_version=_version)

# page sizes, dictionary on/off (a tiny dictionary page limit makes chunks fall back mid-way)
_add_pyarrow("tiny-pages-dict", data_page_size=64, write_batch_size=8, dictionary_pagesize_limit=1024)
_add_pyarrow("tiny-pages-plain-v2", data_page_size=64, write_batch_size=8, use_dictionary=False,
             data_page_version="2.0")
_add_pyarrow("large-pages-dict", data_page_size=8 << 20, write_batch_size=1 << 16, row_group_size=ROWS)
_add_pyarrow("large-pages-plain", data_page_size=8 << 20, write_batch_size=1 << 16, row_group_size=ROWS,
             use_dictionary=False, compression="zstd")

# encodings, on every column whose physical type allows them
for _enc in ENCODABLE:
    for _version in ["1.0", "2.0"]:
        _add_pyarrow(
            f"{_enc.lower().replace('_', '-')}-v{_version[0]}", encoding=_enc, data_page_version=_version,
            # decimals as INT32/INT64 where the encoding is for integers, else as FLBA
            store_decimal_as_integer=_enc in ("DELTA_BINARY_PACKED", "BYTE_STREAM_SPLIT") and _version == "2.0",
        )

# nulls: none / all / non-nullable (the other cases have some)
for _nulls in ["none", "all", "required"]:
    _add_pyarrow(f"nulls-{_nulls}", make_table=lambda s, n=_nulls: wide_table(s, n))

# every type at once, unsigned ints included
_add_pyarrow("all-types-dict", make_table=lambda s: wide_table(s, unsigned=True))
_add_pyarrow("all-types-plain-v2", make_table=lambda s: wide_table(s, unsigned=True), use_dictionary=False,
             data_page_version="2.0", compression="zstd")

# INT96 timestamps (every timestamp column), dictionary and plain
_add_pyarrow("int96-dict", use_deprecated_int96_timestamps=True)
_add_pyarrow("int96-plain-v2", use_deprecated_int96_timestamps=True, use_dictionary=False, data_page_version="2.0")


def timestamps_table(seed: int, units=("s", "ms", "us")) -> pa.Table:
    """Timestamps in several units, with and without a time zone (UTC or another zone: both
    are instants in Parquet), from 1901 to 9999."""
    rng = random.Random(seed)
    micros = [rng.randint(datagen.TS_MIN_US, datagen.TS_MAX_US) if rng.random() < 0.3
              else rng.randint(-(10**15), 4 * 10**15) for _ in range(ROWS)]
    micros[:7] = [0, -1, 1, datagen.TS_MIN_US, datagen.TS_MAX_US, -1_000_000, 951_782_400_000_001]
    cols = {}
    for unit in units:
        div, mul = {"s": (10**6, 1), "ms": (1000, 1), "us": (1, 1), "ns": (1, 1000)}[unit]
        values = _with_nulls([m // div * mul + (rng.randint(0, 999) if unit == "ns" else 0) for m in micros],
                             rng, "some")
        if unit == "ns":  # nanoseconds since the epoch must fit 64 bits
            values = [None if v is None else max(min(v, 2**63 - 1), -(2**63)) for v in values]
        for tz in (None, "UTC", "America/New_York"):
            cols[f"ts_{unit}_{(tz or 'naive').split('/')[-1].lower()}"] = pa.array(values, pa.timestamp(unit, tz))
    return pa.table(cols)


_add_pyarrow("timestamp-units", make_table=timestamps_table)
_add_pyarrow("timestamp-units-plain-v2", make_table=timestamps_table, use_dictionary=False, data_page_version="2.0")
_add_pyarrow("timestamp-nanos", make_table=lambda s: timestamps_table(s, ("ns", "us")), read_conf=NANOS_AS_LONG)
_add_pyarrow("timestamp-nanos-delta", make_table=lambda s: timestamps_table(s, ("ns",)), read_conf=NANOS_AS_LONG,
             encoding="DELTA_BINARY_PACKED", data_page_version="2.0")
# format 2.4 has no nanoseconds: pyarrow writes them as microseconds
_add_pyarrow("timestamp-nanos-as-micros", make_table=lambda s: timestamps_table(s, ("ns",)), version="2.4",
             allow_truncated_timestamps=True, coerce_timestamps="us")


def unsigned_table(seed: int) -> pa.Table:
    rng = random.Random(seed)
    cols = {}
    for bits in (8, 16, 32, 64):
        top = 2**bits - 1
        edges = [0, 1, top, top - 1, 2 ** (bits - 1) - 1, 2 ** (bits - 1)]
        values = [rng.choice(edges) if rng.random() < 0.3 else rng.randint(0, top) for _ in range(ROWS)]
        cols[f"u{bits}"] = pa.array(_with_nulls(values, rng, "some"), getattr(pa, f"uint{bits}")())
        cols[f"u{bits}_required"] = pa.array(values, getattr(pa, f"uint{bits}")())
    return pa.table(cols)


_add_pyarrow("unsigned-dict", make_table=unsigned_table)
_add_pyarrow("unsigned-plain", make_table=unsigned_table, use_dictionary=False)
_add_pyarrow("unsigned-delta-v2", make_table=unsigned_table, encoding="DELTA_BINARY_PACKED", data_page_version="2.0")
_add_pyarrow("unsigned-bss", make_table=unsigned_table, encoding="BYTE_STREAM_SPLIT")

DECIMALS = [(1, 0), (2, 1), (4, 2), (7, 3), (9, 9), (10, 0), (12, 5), (18, 4), (18, 18), (19, 2), (25, 10),
            (28, 0), (30, 5), (38, 0), (38, 10), (38, 38)]


def decimals_table(seed: int) -> pa.Table:
    rng = random.Random(seed)
    cols = {}
    for p, s in DECIMALS:
        typ = pa.decimal128(p, s)
        values = datagen.column_values(f"d{p}_{s}", typ, ROWS, rng, "some")
        top = decimal.Decimal(10**p - 1).scaleb(-s)
        values[:4] = [top, -top, decimal.Decimal(0).scaleb(-s), decimal.Decimal(1).scaleb(-s)]
        cols[f"d{p}_{s}"] = pa.array(values, typ)
    return pa.table(cols)


_add_pyarrow("decimals-flba", make_table=decimals_table)
_add_pyarrow("decimals-int-v2", make_table=decimals_table, store_decimal_as_integer=True, data_page_version="2.0")
_add_pyarrow("decimals-int-plain", make_table=decimals_table, store_decimal_as_integer=True, use_dictionary=False)

# zero rows, empty row groups, many row groups
_add_pyarrow("zero-rows", make_table=lambda s: wide_table(s).slice(0, 0))
_add_pyarrow("many-row-groups", row_group_size=97)


def _write_empty_row_groups(folder: Path, _sources: "Sources") -> None:
    table = wide_table(_seed("pyarrow-empty-row-groups"))
    with pq.ParquetWriter(str(folder / "data.parquet"), table.schema, compression="snappy") as w:
        for part in (table.slice(0, 0), table.slice(0, 1000), table.slice(0, 0), table.slice(1000)):
            w.write_table(part, row_group_size=1000)
    md = pq.ParquetFile(str(folder / "data.parquet")).metadata
    rows = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
    assert 0 in rows and sum(rows) == ROWS, rows


CASES.append(Case("pyarrow-empty-row-groups", _write_empty_row_groups))


def ancient_table(seed: int) -> pa.Table:
    """Dates and timestamps from year 1 on, across the Julian/Gregorian switch (1582) and the
    time zone rebasing Spark does before 1900; the values Spark's LEGACY modes rebase."""
    rng = random.Random(seed)
    epoch = datetime.date(1970, 1, 1)
    day_edges = [datetime.date(*d) for d in [(1, 1, 1), (1000, 3, 1), (1582, 10, 4), (1582, 10, 15),
                                               (1600, 2, 29), (1899, 12, 31), (1970, 1, 1), (2100, 1, 1)]]
    days = [(rng.choice(day_edges) - epoch).days if rng.random() < 0.3 else rng.randint(-719162, 47482)
            for _ in range(ROWS)]
    micros = [d * 86_400_000_000 + rng.randint(0, 86_400_000_000 - 1) for d in days]
    return pa.table({
        "id": pa.array(range(ROWS), pa.int32()),
        "d": pa.array(_with_nulls(days, rng, "some"), pa.date32()),
        "ts": pa.array(_with_nulls(micros, rng, "some"), pa.timestamp("us", tz="UTC")),
    })


# INT96 from a writer that is not Spark: the read mode decides how ancient values are rebased
for _mode in ["LEGACY", "CORRECTED"]:
    _add_pyarrow(f"int96-ancient-{_mode.lower()}", make_table=ancient_table, use_deprecated_int96_timestamps=True,
                 read_conf={"spark.sql.parquet.int96RebaseModeInRead": _mode,
                            "spark.sql.parquet.datetimeRebaseModeInRead": _mode})

# binaryAsString: BYTE_ARRAY columns without a STRING annotation read as strings
_add_pyarrow("binary-as-string", read_conf={"spark.sql.parquet.binaryAsString": "true"})


def _write_field_ids(folder: Path, _sources: "Sources") -> None:
    table = datagen.make_table({"c_int": pa.int32(), "c_string": pa.string(), "c_double": pa.float64(),
                                "c_date": pa.date32()}, ROWS, _seed("pyarrow-field-ids"), "some")
    fields = [f.with_metadata({b"PARQUET:field_id": str(i + 1).encode()}) for i, f in enumerate(table.schema)]
    datagen.write(pa.Table.from_arrays(table.columns, schema=pa.schema(fields)), folder / "data.parquet")


def _field_id_schema(_folder: Path) -> T.StructType:
    """Other names, another order, matched by field id; id 99 is in no file: nulls."""
    def field(name, dtype, fid):
        return T.StructField(name, dtype, True, {"parquet.field.id": fid})

    return T.StructType([field("renamed_string", T.StringType(), 2), field("renamed_int", T.IntegerType(), 1),
                         field("no_such_id", T.LongType(), 99), field("renamed_date", T.DateType(), 4)])


CASES.append(Case("pyarrow-field-ids", _write_field_ids, schema=_field_id_schema,
                  conf=(("spark.sql.parquet.fieldId.read.enabled", "true"),)))


# ---- DuckDB ---------------------------------------------------------------------------------

def duckdb_query(seed: int, rows: int = 5000, unsigned: bool = False) -> str:
    """A deterministic pseudo-random table in DuckDB SQL: signed and unsigned ints over their
    full ranges, floats with NaN/inf/-0.0, strings, blobs, decimals (INT32/INT64/FLBA),
    dates, timestamps (us, ms, s; with and without time zone), UUIDs, booleans, JSON, ENUM,
    nulls in every column and one all-null column; unsigned ints only with ``unsigned``."""
    def null_if(expr: str, key: str, k: int) -> str:
        return f"CASE WHEN {key} % {k} = 0 THEN NULL ELSE {expr} END"

    ts = "make_timestamp(({k} % 4000000000000000)::BIGINT - 1000000000000000)"
    cols = {
        "c_id": "i",
        "c_int": null_if("((h % 4294967296)::BIGINT - 2147483648)::INTEGER", "g", 13),
        "c_bigint": null_if("(h::HUGEINT - 9223372036854775808)::BIGINT", "g", 11),
        "c_tinyint": null_if("((h % 256)::INTEGER - 128)::TINYINT", "g", 10),
        "c_smallint": null_if("((h % 65536)::INTEGER - 32768)::SMALLINT", "g", 9),
        "c_double": "CASE h % 17 WHEN 0 THEN NULL WHEN 1 THEN 'NaN'::DOUBLE WHEN 2 THEN 'inf'::DOUBLE "
                    "WHEN 3 THEN '-inf'::DOUBLE WHEN 4 THEN -0.0::DOUBLE "
                    "ELSE ((h % 2000001)::DOUBLE - 1000000) / 7.0 * pow(10, (g % 40)::INTEGER - 20) END",
        "c_float": "CASE g % 17 WHEN 0 THEN NULL WHEN 1 THEN 'NaN'::FLOAT WHEN 2 THEN 'inf'::FLOAT "
                   "WHEN 3 THEN -0.0::FLOAT "
                   "ELSE (((g % 2000001)::DOUBLE - 1000000) / 3.0 * pow(10, (h % 20)::INTEGER - 10))::FLOAT END",
        "c_string": "CASE WHEN g % 9 = 0 THEN NULL WHEN g % 9 = 1 THEN '' ELSE "
                    "repeat(chr((65 + h % 26)::INTEGER), (g % 20)::INTEGER) || '_ü中' || (h % 1000)::VARCHAR END",
        "c_category": null_if("'cat' || (h % 5)::VARCHAR", "h", 19),
        "c_blob": null_if("unhex(hex(h))", "h", 23),
        "c_dec_4_1": null_if("(((h % 1999)::INTEGER - 999)::VARCHAR || '.' || (g % 10)::VARCHAR)::DECIMAL(4,1)", "g", 12),
        "c_dec_9_2": null_if("(((h % 1999999)::INTEGER - 999999)::VARCHAR || '.' "
                             "|| lpad((g % 100)::VARCHAR, 2, '0'))::DECIMAL(9,2)", "g", 13),
        "c_dec_18_3": null_if("(((h % 1999999999999999)::BIGINT - 999999999999999)::VARCHAR || '.' "
                              "|| lpad((g % 1000)::VARCHAR, 3, '0'))::DECIMAL(18,3)", "g", 14),
        "c_dec_38_10": null_if("((CASE WHEN h % 2 = 0 THEN '-' ELSE '' END) || (h % 10000000000000000000)::VARCHAR "
                               "|| (g % 1000000000)::VARCHAR || '.' || lpad((h % 10000000000)::VARCHAR, 10, '0'))"
                               "::DECIMAL(38,10)", "g", 15),
        "c_date": null_if("DATE '1970-01-01' + ((h % 60000)::INTEGER - 20000)", "h", 29),
        "c_ts": null_if(ts.format(k="h"), "h", 31),
        "c_tstz": null_if(ts.format(k="g") + "::TIMESTAMPTZ", "g", 31),
        "c_ts_ms": null_if(ts.format(k="g") + "::TIMESTAMP_MS", "g", 37),
        "c_ts_s": null_if(ts.format(k="g") + "::TIMESTAMP_S", "g", 41),
        "c_uuid": null_if("md5(i::VARCHAR)::UUID", "h", 43),
        "c_bool": null_if("h % 2 = 0", "g", 7),
        "c_json": null_if("('{\"k\": ' || i::VARCHAR || '}')::JSON", "g", 47),
        "c_enum": null_if("('v' || (h % 3)::VARCHAR)::ENUM('v0', 'v1', 'v2')", "g", 53),
        "c_all_null": "NULL::INTEGER",
    }
    if unsigned:
        cols.update({
            "c_utinyint": null_if("(h % 256)::UTINYINT", "g", 8),
            "c_usmallint": null_if("(h % 65536)::USMALLINT", "g", 7),
            "c_uinteger": null_if("(h % 4294967296)::UINTEGER", "g", 6),
            "c_ubigint": null_if("h", "g", 5),
        })
    select = ",\n  ".join(f"{expr} AS {name}" for name, expr in cols.items())
    return (f"WITH base AS (SELECT i, hash(i, {seed}) AS h, hash(i, {seed} + 1) AS g FROM range({rows}) t(i))\n"
            f"SELECT\n  {select}\nFROM base")


def _duckdb_case(case_id: str, version: str, codec: str, unsigned: bool = False):
    def write(folder: Path, _sources: "Sources") -> None:
        con = duckdb.connect()
        try:
            con.execute("SET threads = 1")
            con.execute("SET TimeZone = 'UTC'")
            target = str(folder / "data.parquet").replace("'", "''")
            con.execute(
                f"COPY ({duckdb_query(_seed(case_id) % 100_000, unsigned=unsigned)}) TO '{target}' "
                f"(FORMAT PARQUET, PARQUET_VERSION {version}, COMPRESSION {codec}, ROW_GROUP_SIZE 2048)"
            )
        finally:
            con.close()

    return write


def _duckdb_schema(folder: Path) -> str:
    """Every column but the UUID one, which Spark cannot read (a test below covers it)."""
    ddl, dropped = arrow_oracle.spark_ddl(pq.read_schema(str(folder / "data.parquet")))
    assert dropped == ["c_uuid"], dropped
    return ddl


#: Widenings vanilla Spark 4.1 reads: int -> long/double/decimal, float -> double, decimal
#: precision and scale up, date -> timestamp_ntz, tinyint/smallint up.
WIDENED_SCHEMA = (
    "c_id decimal(25,0), c_int bigint, c_bigint decimal(30,0), c_tinyint int, c_smallint double, "
    "c_float double, c_dec_4_1 decimal(10,2), c_dec_9_2 decimal(20,4), c_dec_18_3 decimal(38,10), "
    "c_date timestamp_ntz, c_string string"
)


for _version in ["V1", "V2"]:
    for _codec in ["uncompressed", "snappy", "gzip", "zstd", "lz4", "brotli"]:
        _id = f"duckdb-{_version}-{_codec}"
        CASES.append(Case(_id, _duckdb_case(_id, _version, _codec), schema=_duckdb_schema, duckdb_oracle=True))
    _id = f"duckdb-{_version}-unsigned"
    CASES.append(Case(_id, _duckdb_case(_id, _version, "zstd", unsigned=True), schema=_duckdb_schema, duckdb_oracle=True))
    # Spark 4.1's read-side type widening: a read schema wider than the file's
    _id = f"duckdb-{_version}-widened"
    CASES.append(Case(_id, _duckdb_case(_id, _version, "snappy"), schema=WIDENED_SCHEMA, duckdb_oracle=True))

# DuckDB computes INT32 deltas in 64 bits: full-range INT32 columns get 33-bit miniblocks, which
# parquet-java (vanilla Spark) reads, wrapping to 32 bits; only the integer columns, so that
# vanilla Spark is the oracle (its vectorized reader cannot read the BYTE_STREAM_SPLIT floats)
CASES.append(Case("duckdb-V2-int-deltas", _duckdb_case("duckdb-V2-int-deltas", "V2", "zstd"),
                  schema="c_id bigint, c_int int, c_bigint bigint, c_smallint smallint, c_date date"))


# ---- Spark ----------------------------------------------------------------------------------

#: Spark's writer settings; the defaults (dictionary on, snappy) are "codec-snappy".
SPARK_SETTINGS: dict[str, dict[str, str]] = {
    "nodict": {"parquet.enable.dictionary": "false"},
    "dict-fallback": {"parquet.dictionary.page.size": "512"},
    "tiny-pages": {"parquet.page.size": "256", "parquet.page.size.row.check.min": "4",
                   "parquet.page.size.row.check.max": "16", "parquet.dictionary.page.size": "2048"},
    "large-pages": {"parquet.page.size": str(8 << 20), "parquet.block.size": str(256 << 20)},
    **{f"codec-{c}": {"spark.sql.parquet.compression.codec": c}
       for c in ["none", "snappy", "gzip", "zstd", "lz4", "lz4_raw"]},
    "v2": {"parquet.writer.version": "PARQUET_2_0"},
    "v2-nodict": {"parquet.writer.version": "PARQUET_2_0", "parquet.enable.dictionary": "false"},
    "v2-byte-stream-split": {"parquet.writer.version": "PARQUET_2_0", "parquet.enable.dictionary": "false",
                             "parquet.enable.bytestreamsplit": "true"},
    # TIMESTAMP_MICROS is what the other settings write
    **{f"ts-{t}": {"spark.sql.parquet.outputTimestampType": t} for t in ["INT96", "TIMESTAMP_MILLIS"]},
}


def _spark_write(folder: Path, sources: "Sources", source: Path, settings: dict[str, str]) -> None:
    """Spark writes ``source`` with ``settings`` (``spark.*``: SQL confs, else writer options);
    timestamps as TIMESTAMP_MICROS unless the settings say otherwise (INT96 has cases of its own)."""
    spark = sources.spark
    settings = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS", **settings}
    sql_conf = {k: v for k, v in settings.items() if k.startswith("spark.")}
    options = {k: v for k, v in settings.items() if not k.startswith("spark.")}
    # the sources come from pyarrow: their ancient values are already Gregorian
    as_written = {"spark.sql.parquet.datetimeRebaseModeInRead": "CORRECTED",
                  "spark.sql.parquet.int96RebaseModeInRead": "CORRECTED"}
    with conf(spark, {**REFERENCE_CONF, **as_written, **sql_conf}):
        df = spark.read.parquet(str(source))
        df.repartition(2, df.columns[1]).write.options(**options).mode("overwrite").parquet(str(folder / "out"))


for _name, _settings in SPARK_SETTINGS.items():
    CASES.append(Case(f"spark-{_name}", lambda f, s, st=_settings: _spark_write(f, s, s.wide_source(), st)))
# decimals of every precision 1..38 (INT32 up to 9, INT64 up to 18, then FLBA; legacy: all FLBA)
CASES.append(Case("spark-decimals-1-38", lambda f, s: _spark_write(f, s, s.decimal_source(), {})))
CASES.append(Case("spark-decimals-1-38-legacy",
                  lambda f, s: _spark_write(f, s, s.decimal_source(), {"spark.sql.parquet.writeLegacyFormat": "true"})))
# ancient dates and timestamps written in LEGACY mode: the file says so, and readers rebase them
for _ts in ["TIMESTAMP_MICROS", "TIMESTAMP_MILLIS", "INT96"]:
    CASES.append(Case(f"spark-legacy-rebase-{_ts.lower()}", lambda f, s, t=_ts: _spark_write(
        f, s, s.ancient_source(), {"spark.sql.parquet.outputTimestampType": t,
                                   "spark.sql.parquet.datetimeRebaseModeInWrite": "LEGACY",
                                   "spark.sql.parquet.int96RebaseModeInWrite": "LEGACY"})))


# ---- parquet-java ---------------------------------------------------------------------------

#: Logical types neither pyarrow nor DuckDB writes: ENUM, BSON; also JSON, unsigned and
#: nanosecond timestamps as parquet-java writes them. INT64 values stay outside the INT32 range
#: so that py4j passes them as longs.
PARQUET_JAVA_SCHEMA = """message m {
  required int32 id;
  optional binary e (ENUM);
  optional binary b (BSON);
  optional binary j (JSON);
  optional binary s (STRING);
  optional int32 u8 (INTEGER(8,false));
  optional int32 u32 (INTEGER(32,false));
  optional int64 u64 (INTEGER(64,false));
  optional int32 i16 (INTEGER(16,true));
  optional int64 tn (TIMESTAMP(NANOS,true));
  optional int64 tm (TIMESTAMP(MILLIS,false));
  optional fixed_len_byte_array(3) f3;
}"""
PARQUET_JAVA_ROWS = 400


def _parquet_java_write(folder: Path, sources: "Sources", codec: str, v2: bool, dictionary: bool) -> None:
    jvm = sources.spark._jvm
    P = jvm.org.apache.parquet
    schema = P.schema.MessageTypeParser.parseMessageType(PARQUET_JAVA_SCHEMA)
    path = jvm.org.apache.hadoop.fs.Path(str(folder / "data.parquet"))
    version = P.column.ParquetProperties.WriterVersion.valueOf("PARQUET_2_0" if v2 else "PARQUET_1_0")
    writer = (
        P.hadoop.example.ExampleParquetWriter.builder(path)
        .withType(schema)
        .withConf(jvm.org.apache.hadoop.conf.Configuration())
        .withCompressionCodec(P.hadoop.metadata.CompressionCodecName.valueOf(codec))
        .withWriterVersion(version)
        .withDictionaryEncoding(dictionary)
        .withPageSize(512)
        .withRowGroupSize(16 * 1024)
        .build()
    )
    factory = P.example.data.simple.SimpleGroupFactory(schema)
    binary = P.io.api.Binary
    rng = random.Random(_seed(f"parquet-java-{codec}-{v2}"))
    try:
        for i in range(PARQUET_JAVA_ROWS):
            g = factory.newGroup()
            g.append("id", i)
            if rng.random() > 0.1:
                g.append("e", rng.choice(["RED", "GREEN", "BLUE"]))
            if rng.random() > 0.1:
                g.add("b", binary.fromConstantByteArray(bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 9)))))
            if rng.random() > 0.1:
                g.append("j", json.dumps({"i": i, "v": rng.random()}))
            if rng.random() > 0.1:
                g.append("s", rng.choice(["", "é", "abc", "中文字"]) * rng.randint(0, 3))
            if rng.random() > 0.1:
                g.append("u8", rng.randint(0, 255))
            if rng.random() > 0.1:
                g.append("u32", rng.randint(-(2**31), 2**31 - 1))  # the bits of UINT32 0 .. 2^32-1
            if rng.random() > 0.1:
                g.append("u64", rng.choice([-1, 1]) * rng.randint(2**40, 2**63 - 1))
            if rng.random() > 0.1:
                g.append("i16", rng.randint(-32768, 32767))
            if rng.random() > 0.1:
                g.append("tn", rng.choice([-1, 1]) * rng.randint(2**40, 2**62))
            if rng.random() > 0.1:
                g.append("tm", rng.randint(2**40, 2**45))
            if rng.random() > 0.1:
                g.add("f3", binary.fromConstantByteArray(bytes(rng.getrandbits(8) for _ in range(3))))
            writer.write(g)
    finally:
        writer.close()


for _codec, _v2, _dict in [("LZ4", False, True), ("GZIP", True, False), ("ZSTD", True, True)]:
    CASES.append(Case(
        f"parquet-java-{_codec.lower()}-v{2 if _v2 else 1}-{'dict' if _dict else 'plain'}",
        lambda f, s, c=_codec, v=_v2, d=_dict: _parquet_java_write(f, s, c, v, d),
        conf=tuple(NANOS_AS_LONG.items()),
    ))

CASE_BY_ID = {c.id: c for c in CASES}
assert len(CASE_BY_ID) == len(CASES), "duplicate case ids"


# --------------------------------------------------------------------------------------------
# Writing (once per module, lazily per case)
# --------------------------------------------------------------------------------------------


class Sources:
    """Writes each case's files on first use, and the shared inputs of Spark's writer."""

    def __init__(self, spark, root: Path):
        self.spark = spark
        self.root = root
        self._written: dict[str, Path] = {}
        self._sources: dict[str, Path] = {}

    def folder(self, case: Case) -> Path:
        if case.id not in self._written:
            folder = self.root / case.id
            if folder.exists():  # an earlier attempt failed half-way
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            with decimal.localcontext(decimal.Context(prec=80)):  # decimal(38, s) needs more than 28 digits
                case.write(folder, self)
            self._written[case.id] = folder
        return self._written[case.id]

    def _source(self, name: str, table_fn: Callable[[], pa.Table]) -> Path:
        if name not in self._sources:
            path = self.root / "_sources" / name / "data.parquet"
            datagen.write(table_fn(), path, compression="snappy")
            self._sources[name] = path.parent
        return self._sources[name]

    def wide_source(self) -> Path:
        # Spark writes unsigned ints as the signed types it reads them as
        return self._source("wide", lambda: wide_table(_seed("spark-source"), unsigned=True))

    def ancient_source(self) -> Path:
        return self._source("ancient", lambda: ancient_table(_seed("spark-ancient")))

    def decimal_source(self) -> Path:
        def table():
            rng = random.Random(_seed("spark-decimals"))
            cols = {}
            for p in range(1, 39):
                s = [0, p // 2, p][p % 3]
                cols[f"d{p}_{s}"] = pa.array(datagen.column_values(f"d{p}", pa.decimal128(p, s), ROWS, rng, "some"),
                                             pa.decimal128(p, s))
            return pa.table(cols)

        return self._source("decimals", table)


@pytest.fixture(scope="module")
def sources(spark, tmp_path_factory) -> Sources:
    return Sources(spark, tmp_path_factory.mktemp("writers"))


# --------------------------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------------------------

#: query name -> (what Spark runs on the read DataFrame, the same on oracle rows)
QUERIES = {
    "select *": (lambda df: df, lambda rows: rows),
    "columns reversed, first column not null": (
        lambda df: reversed_columns(first_column_not_null(df)),
        lambda rows: [tuple(reversed(r)) for r in rows if r[0] is not None],
    ),
}


def parquet_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.parquet") if not p.name.startswith(("_", ".")))


def nonempty_row_groups(folder: Path) -> int:
    total = 0
    for f in parquet_files(folder):
        md = pq.ParquetFile(str(f)).metadata
        total += sum(1 for i in range(md.num_row_groups) if md.row_group(i).num_rows > 0)
    return total


def _reader(case: Case, folder: Path):
    schema = case.read_schema(folder)
    target = str(folder / "out") if (folder / "out").is_dir() else str(folder)

    def read(s):
        r = s.read
        return (r.schema(schema) if schema else r).parquet(target)

    return read


def _oracle_rows(spark, case: Case, folder: Path, settings: dict) -> tuple[list, str]:
    """``SELECT *`` as pyarrow (else DuckDB, for DuckDB files) reads the files, converted to
    Spark's values for the schema Spark reads them with; and which oracle it was."""
    with conf(spark, settings):
        schema = _reader(case, folder)(spark).schema
    try:
        return arrow_oracle.spark_rows(arrow_oracle.read_table(folder), schema), "pyarrow"
    except Exception as e:  # noqa: BLE001
        if not case.duckdb_oracle:
            raise
        return arrow_oracle.spark_rows(arrow_oracle.read_table_duckdb(folder), schema), (
            f"DuckDB (pyarrow cannot read the file: {error_summary(e, 120)})"
        )


def check_case(spark, case: Case, folder: Path) -> list[str]:
    """Every query: lmspark's answer equals the oracle's, and lmspark read the data itself:
    LmParquetScan, no file handed to Spark's reader (the reasons it logged are shown if one
    was), every non-empty row group read. Returns one note per query."""
    read = _reader(case, folder)
    common = dict(case.conf)
    oracle_base = None
    notes = []
    for name, (shape, shape_rows) in QUERIES.items():
        query = lambda s: shape(read(s))  # noqa: E731
        with capture_lm_log(spark) as log:
            try:
                lm, lm_error = run_query_full(spark, query, {**common, **LM_CONF}), None
            except Exception as e:  # noqa: BLE001
                lm, lm_error = None, e
        try:
            ref = run_query_full(spark, query, {**common, **REFERENCE_CONF})
            vanilla_error = None
        except Exception as e:  # noqa: BLE001
            ref, vanilla_error = None, e
        vanilla = "vanilla Spark reads it" if vanilla_error is None else f"vanilla Spark fails: {error_summary(vanilla_error, 160)}"
        if lm_error is not None:
            jvm_alive(spark)
            pytest.fail(f"{name}: lmspark fails: {error_summary(lm_error)}\n({vanilla})")
        if ref is not None:
            expected, columns, oracle = ref.rows, ref.columns, "vanilla Spark"
        else:
            if oracle_base is None:
                oracle_base = _oracle_rows(spark, case, folder, common)
            rows, oracle = oracle_base
            expected = Counter(shape_rows(rows))
            with conf(spark, common):
                columns = shape(read(spark)).columns
        assert lm.columns == columns, f"{name}: columns differ: lmspark {lm.columns} vs {oracle} {columns}"
        assert lm.rows == expected, (
            f"{name}: lmspark's answer differs from {oracle}'s ({vanilla}; {lm_status(lm.plan)}, metrics {lm.metrics})\n"
            + describe_difference(lm.rows, expected)
        )
        try:
            assert_lm_read_everything(lm, nonempty_row_groups(folder) if name == "select *" else None)
        except AssertionError as e:
            why = "; ".join(sorted(set(log.file_fallbacks().values()))) or "none logged"
            raise AssertionError(f"{name}: {str(e).splitlines()[0]} (why: {why}); same answer as {oracle}") from None
        notes.append(f"{name}: read by lmspark, same answer as {oracle}")
    return notes


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_writer(spark, sources, case):
    folder = sources.folder(case)
    assert parquet_files(folder), f"{case.id} wrote no Parquet file"
    print("; ".join(check_case(spark, case, folder)))


# --------------------------------------------------------------------------------------------
# The pyarrow oracle itself, against vanilla Spark where vanilla can read the file
# --------------------------------------------------------------------------------------------

ORACLE_CHECKS = [
    "pyarrow-snappy-v1", "pyarrow-nulls-all", "pyarrow-int96-dict", "pyarrow-timestamp-units",
    "pyarrow-timestamp-nanos", "pyarrow-unsigned-dict", "pyarrow-decimals-flba", "pyarrow-empty-row-groups",
    "duckdb-V1-zstd", "spark-ts-INT96", "spark-decimals-1-38", "parquet-java-lz4-v1-dict",
]


@pytest.mark.parametrize("case_id", ORACLE_CHECKS)
def test_arrow_oracle_matches_vanilla(spark, sources, case_id):
    """Where vanilla Spark reads a file, the pyarrow oracle gives exactly its answer: the
    conversion the other tests rely on (unsigned widening, INT96, units, decimals) is right."""
    case = CASE_BY_ID[case_id]
    folder = sources.folder(case)
    ref = run_query_full(spark, _reader(case, folder), {**dict(case.conf), **REFERENCE_CONF})
    rows, _ = _oracle_rows(spark, case, folder, dict(case.conf))
    assert Counter(rows) == ref.rows, describe_difference(Counter(rows), ref.rows)


# --------------------------------------------------------------------------------------------
# UUID columns: Spark has no type for them
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def uuid_files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("uuid")
    rng = random.Random(4242)
    values = [None if rng.random() < 0.1 else uuid.UUID(int=rng.getrandbits(128)).bytes for _ in range(500)]
    pq.write_table(pa.table({"id": pa.array(range(500), pa.int64()), "u": pa.array(values, pa.uuid())}),
                   str(root / "pyarrow.parquet"))
    con = duckdb.connect()
    try:
        target = str(root / "duckdb.parquet").replace("'", "''")
        con.execute(f"COPY (SELECT i AS id, CASE WHEN i % 10 = 0 THEN NULL ELSE md5(i::VARCHAR)::UUID END AS u "
                    f"FROM range(500) t(i)) TO '{target}' (FORMAT PARQUET)")
    finally:
        con.close()
    return {"pyarrow": root / "pyarrow.parquet", "duckdb": root / "duckdb.parquet"}


@pytest.mark.parametrize("writer", ["pyarrow", "duckdb"])
@pytest.mark.parametrize("as_type", ["binary", "string"])
def test_uuid_column(spark, uuid_files, writer, as_type):
    """A UUID column (FLBA(16)): Spark infers no type for it, but reads it when asked for
    binary; lmspark must then read it itself with the same answer. Where vanilla Spark fails
    (as string), lmspark fails cleanly as well or returns the canonical text."""
    path = str(uuid_files[writer])
    query = lambda s: s.read.schema(f"id bigint, u {as_type}").parquet(path)  # noqa: E731
    try:
        expected = run_query_full(spark, query, REFERENCE_CONF).rows
        oracle = "vanilla Spark"
    except Exception as e:  # noqa: BLE001
        vanilla_error = error_summary(e)
        oracle = None
    try:
        lm = run_query_full(spark, query, LM_CONF)
    except Exception as e:  # noqa: BLE001
        jvm_alive(spark)
        if oracle:
            pytest.fail(f"lmspark fails where vanilla Spark reads the column: {error_summary(e)}")
        print(f"lmspark fails as vanilla Spark does ({vanilla_error}): {error_summary(e)}")
        return
    if oracle is None:  # the 16 bytes from pyarrow, as text
        table = pq.read_table(path)
        raw = [None if v is None else (v if isinstance(v, bytes) else uuid.UUID(str(v)).bytes)
               for v in table.column("u").to_pylist()]
        want = [None if b is None else (b if as_type == "binary" else str(uuid.UUID(bytes=b))) for b in raw]
        expected = Counter(normalise((i, w)) for i, w in zip(table.column("id").to_pylist(), want))
        oracle = f"pyarrow (vanilla Spark fails: {vanilla_error})"
    assert lm.rows == expected, f"differs from {oracle}\n" + describe_difference(lm.rows, expected)
    assert_lm_read_everything(lm)
