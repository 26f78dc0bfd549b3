"""pyarrow as an oracle: the rows Spark would return for a Parquet file, computed from what
pyarrow reads, for files vanilla Spark cannot read (BYTE_STREAM_SPLIT, BROTLI, ...).

The conversion follows Spark's Parquet type mapping, driven by the Spark schema of the read
(inferred by Spark, or given by the test):
 - unsigned ints widen: UINT8 -> short, UINT16 -> int, UINT32 -> long, UINT64 -> decimal(20,0);
 - timestamps and timestamp_ntz become microseconds since the epoch (what the suites compare,
   see ``conftest._comparable_df``), from any unit; INT96 is read by pyarrow as microseconds;
 - TIMESTAMP(NANOS) read as long (``spark.sql.legacy.parquet.nanosAsLong``) is the raw nanos;
 - dates become days since the epoch; decimals keep their scale; dictionary columns decode;
 - Spark 4.1's read-side widenings (int -> long/double/decimal, float -> double, decimal
   precision/scale up, date -> timestamp_ntz) convert the values as Spark does.
Rows come out normalised exactly as ``conftest.normalise`` does for Spark's rows, so the two
compare with ``==``. Only flat schemas are supported.
"""

from __future__ import annotations

import decimal
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import types as T

from conftest import normalise

#: Decimal arithmetic wide enough for decimal(38, s) (the default context keeps 28 digits).
_DECIMALS = decimal.Context(prec=80)
_UNIT_TO_MICROS = {"s": (1_000_000, 1), "ms": (1000, 1), "us": (1, 1), "ns": (1, 1000)}


def read_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    """All Parquet files of ``path`` (a file or a folder) as one table, INT96 as microseconds
    (Spark's INT96 range exceeds 64-bit nanoseconds)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*.parquet") if p.stat().st_size > 0)
    tables = [pq.read_table(str(f), columns=columns, coerce_int96_timestamp_unit="us") for f in files]
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables([t.cast(tables[0].schema) for t in tables])


def read_table_duckdb(path: Path) -> pa.Table:
    """All Parquet files of ``path`` as DuckDB reads them, as an Arrow table: the fallback oracle
    for DuckDB-written files that pyarrow rejects."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        pattern = str(path) if path.is_file() else str(path / "*.parquet")
        return con.sql("SELECT * FROM read_parquet(?)", params=[pattern]).to_arrow_table()
    finally:
        con.close()


def _plain(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """Dictionary columns decoded, extension types (UUID, JSON) as their storage."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = pa.chunked_array([c.storage for c in arr.chunks], type=arr.type.storage_type)
    return arr


def _as_collected(d: decimal.Decimal, scale: int) -> decimal.Decimal:
    """A decimal as PySpark's collect() returns it: the value at the type's scale, carried by
    its engineering string (Java's BigDecimal.toEngineeringString), e.g. 9E-10 -> 900E-12."""
    quantum = decimal.Decimal(1).scaleb(-scale)
    return decimal.Decimal(d.quantize(quantum, context=_DECIMALS).to_eng_string(context=_DECIMALS))


def _ints(arr: pa.ChunkedArray) -> list:
    return arr.cast(pa.int64()).to_pylist()


def column_values(arr: pa.ChunkedArray, spark_type: T.DataType) -> list:
    """One column as Spark would return it (dates/timestamps as integers), before normalising."""
    arr = _plain(arr)
    at = arr.type
    if isinstance(spark_type, T.TimestampNTZType) and pa.types.is_date32(at):  # widening: midnight
        return [None if v is None else v * 86_400_000_000 for v in arr.cast(pa.int32()).to_pylist()]
    if isinstance(spark_type, (T.TimestampType, T.TimestampNTZType)):
        if not pa.types.is_timestamp(at):
            raise TypeError(f"cannot read {at} as {spark_type}")
        mul, div = _UNIT_TO_MICROS[at.unit]
        # floor division: Spark truncates towards negative infinity when it drops nanos
        return [None if v is None else v * mul // div for v in _ints(arr)]
    if isinstance(spark_type, T.DateType):
        if not pa.types.is_date32(at):
            raise TypeError(f"cannot read {at} as {spark_type}")
        return arr.cast(pa.int32()).to_pylist()
    if isinstance(spark_type, T.LongType) and pa.types.is_timestamp(at):
        return _ints(arr)  # TIMESTAMP(NANOS) as raw long (nanosAsLong)
    if isinstance(spark_type, T.DecimalType):
        if not (pa.types.is_decimal(at) or pa.types.is_integer(at)):  # integers: UINT64 -> decimal(20,0)
            raise TypeError(f"cannot read {at} as {spark_type}")
        return [None if v is None else _as_collected(decimal.Decimal(v), spark_type.scale) for v in arr.to_pylist()]
    if isinstance(spark_type, T.StringType):
        if pa.types.is_binary(at) or pa.types.is_large_binary(at) or pa.types.is_fixed_size_binary(at):
            return [None if v is None else v.decode("utf-8", "replace") for v in arr.to_pylist()]
        return arr.to_pylist()
    if isinstance(spark_type, T.BinaryType):
        values = arr.to_pylist()
        return [v.encode("utf-8") if isinstance(v, str) else v for v in values]
    if isinstance(spark_type, (T.StructType, T.ArrayType, T.MapType)):
        raise TypeError(f"nested type {spark_type.simpleString()} is not supported by the pyarrow oracle")
    if isinstance(spark_type, (T.FloatType, T.DoubleType)) and pa.types.is_integer(at):  # widening
        return [None if v is None else float(v) for v in arr.to_pylist()]
    # booleans, integers (signed, or unsigned widened to a larger signed type), floats
    return arr.to_pylist()


def spark_rows(table: pa.Table, schema: T.StructType) -> list[tuple]:
    """The rows of ``table`` as Spark reads them with ``schema`` (columns matched by name, case
    insensitively, as Spark does by default; a column missing from the file reads as nulls),
    normalised like ``conftest.normalise``."""
    by_name = {n.lower(): i for i, n in enumerate(table.column_names)}
    cols = []
    for f in schema.fields:
        i = by_name.get(f.name.lower())
        cols.append([None] * table.num_rows if i is None else column_values(table.column(i), f.dataType))
    return [normalise(tuple(r)) for r in zip(*cols)] if cols else [()] * table.num_rows


def expected_rows(path: Path, schema: T.StructType) -> Counter:
    """The multiset of rows Spark would return for ``SELECT *`` over ``path`` with ``schema``."""
    return Counter(spark_rows(read_table(path), schema))


def spark_ddl_type(t: pa.DataType, nanos_as_long: bool = False) -> str | None:
    """The Spark type Spark infers for a Parquet column pyarrow reads as ``t`` (None when Spark
    has no mapping: FLOAT16, UUID, TIME, nanosecond timestamps without nanosAsLong).
    INT96 columns read as timestamps without a time zone here, yet Spark reads them as
    ``timestamp``; do not use this for INT96 files."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    if isinstance(t, pa.BaseExtensionType):
        return "string" if t.extension_name == "arrow.json" else None
    simple = {
        pa.bool_(): "boolean", pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int",
        pa.int64(): "bigint", pa.uint8(): "smallint", pa.uint16(): "int", pa.uint32(): "bigint",
        pa.uint64(): "decimal(20,0)", pa.float32(): "float", pa.float64(): "double", pa.date32(): "date",
        pa.string(): "string", pa.large_string(): "string", pa.binary(): "binary", pa.large_binary(): "binary",
    }
    if t in simple:
        return simple[t]
    if pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_decimal(t) and t.precision <= 38:
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            return "bigint" if nanos_as_long else None
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    return None


def spark_ddl(schema: pa.Schema, nanos_as_long: bool = False) -> tuple[str, list[str]]:
    """A Spark DDL schema for the columns Spark can read, and the names of those it cannot."""
    keep, dropped = [], []
    for f in schema:
        st = spark_ddl_type(f.type, nanos_as_long)
        if st is None:
            dropped.append(f.name)
        else:
            keep.append(f"`{f.name}` {st}")
    return ", ".join(keep), dropped
