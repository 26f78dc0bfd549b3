"""Seeded test data written with pyarrow: every type lmspark supports, with edge values.

Pure Python (no numpy): the tables are small, the point is variety, not volume.
"""

from __future__ import annotations

import datetime as dt
import random
import string
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FLOAT32_MAX = 3.4028234663852886e38
FLOAT32_MIN_SUBNORMAL = 1.401298464324817e-45
FLOAT32_MIN_NORMAL = 1.1754943508222875e-38

EPOCH = dt.date(1970, 1, 1)
#: Dates from here on need no Julian/Gregorian rebasing, whatever the rebase mode.
DATE_MIN = (dt.date(1583, 1, 1) - EPOCH).days
DATE_MAX = (dt.date(9999, 12, 31) - EPOCH).days
#: Timestamps from here on need no rebasing either (Spark's last switch is near 1900-01-01 UTC).
TS_MIN_US = int((dt.datetime(1901, 1, 1) - dt.datetime(1970, 1, 1)).total_seconds()) * 1_000_000
TS_MAX_US = int((dt.datetime(9999, 12, 31, 23, 59, 59) - dt.datetime(1970, 1, 1)).total_seconds()) * 1_000_000 + 999_999

#: Column name -> pyarrow type, for every flat type lmspark supports.
SUPPORTED_COLUMNS: dict[str, pa.DataType] = {
    "c_bool": pa.bool_(),
    "c_int": pa.int32(),
    "c_long": pa.int64(),
    "c_float": pa.float32(),
    "c_double": pa.float64(),
    "c_date": pa.date32(),
    "c_ts_us": pa.timestamp("us", tz="UTC"),
    "c_ts_ms": pa.timestamp("ms", tz="UTC"),
    "c_ntz_us": pa.timestamp("us"),
    "c_ntz_ms": pa.timestamp("ms"),
    "c_string": pa.string(),
    "c_binary": pa.binary(),
}

#: Flat types outside the supported list: lmspark may serve them or decline them cleanly.
OTHER_FLAT_COLUMNS: dict[str, pa.DataType] = {
    "c_int8": pa.int8(),
    "c_int16": pa.int16(),
    "c_uint8": pa.uint8(),
    "c_uint16": pa.uint16(),
    "c_uint32": pa.uint32(),
    "c_dec_9_2": pa.decimal128(9, 2),
    "c_dec_18_4": pa.decimal128(18, 4),
    "c_dec_30_5": pa.decimal128(30, 5),
    "c_large_string": pa.large_string(),
    "c_fixed": pa.binary(5),
}

_ALPHABET = string.ascii_letters + string.digits + " _-" + "éüß中文字😀\u0301\u00a0"

EDGES = {
    "c_int": [0, 1, -1, INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1],
    "c_long": [0, 1, -1, INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, INT32_MAX + 1],
    "c_float": [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), FLOAT32_MAX, -FLOAT32_MAX,
                FLOAT32_MIN_SUBNORMAL, FLOAT32_MIN_NORMAL, 0.1],
    "c_double": [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 1.7976931348623157e308,
                 -1.7976931348623157e308, 5e-324, 2.2250738585072014e-308, 0.1],
    "c_date": [0, -1, 1, DATE_MIN, DATE_MAX, (dt.date(1600, 2, 29) - EPOCH).days, (dt.date(2000, 2, 29) - EPOCH).days],
    "c_ts_us": [0, -1, 1, TS_MIN_US, TS_MAX_US, 951_782_400_000_001, -1_000_000],
    "c_string": ["", " ", "a", "A", "😀", "中文", "e\u0301", "\u0000", "null", "x" * 3000, "ÿ" * 7],
    "c_binary": [b"", b"\x00", b"\xff" * 40, b"abc", bytes(range(256))],
}


def _rand_float(rng: random.Random) -> float:
    return rng.choice((1, -1)) * rng.random() * 10 ** rng.randint(-40, 40)


def _fresh(name: str, typ: pa.DataType, rng: random.Random):
    """One random value for a column."""
    if pa.types.is_boolean(typ):
        return rng.random() < 0.5
    if name in ("c_int",):
        return rng.randint(INT32_MIN, INT32_MAX) if rng.random() < 0.5 else rng.randint(-1000, 1000)
    if name in ("c_long",):
        return rng.randint(INT64_MIN, INT64_MAX) if rng.random() < 0.5 else rng.randint(-10**6, 10**6)
    if name == "c_int8":
        return rng.randint(-128, 127)
    if name == "c_int16":
        return rng.randint(-32768, 32767)
    if name == "c_uint8":
        return rng.randint(0, 255)
    if name == "c_uint16":
        return rng.randint(0, 65535)
    if name == "c_uint32":
        return rng.randint(0, 2**32 - 1)
    if pa.types.is_decimal(typ):
        import decimal

        digits = rng.randint(0, typ.precision)
        unscaled = rng.randint(-(10**digits) + 1, 10**digits - 1) if digits else 0
        return decimal.Decimal(unscaled).scaleb(-typ.scale)
    if pa.types.is_floating(typ):
        return _rand_float(rng)
    if pa.types.is_date32(typ):
        return rng.randint(DATE_MIN, DATE_MAX) if rng.random() < 0.3 else rng.randint(-20000, 40000)
    if pa.types.is_timestamp(typ):
        us = rng.randint(TS_MIN_US, TS_MAX_US) if rng.random() < 0.3 else rng.randint(-(10**15), 4 * 10**15)
        return us // 1000 if typ.unit == "ms" else us
    if pa.types.is_fixed_size_binary(typ):
        return bytes(rng.getrandbits(8) for _ in range(typ.byte_width))
    if pa.types.is_binary(typ):
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 24)))
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 30)))
    raise ValueError(f"no generator for {name}: {typ}")


def _edges(name: str, typ: pa.DataType) -> list:
    if name in EDGES:
        return EDGES[name]
    if pa.types.is_timestamp(typ):
        return [v // 1000 if typ.unit == "ms" else v for v in EDGES["c_ts_us"]]
    return []


def column_values(name: str, typ: pa.DataType, n: int, rng: random.Random, nulls: str) -> list:
    """``n`` values: ~10% edge values, ~45% from a small pool (so dictionaries stay useful), the
    rest fresh; ``nulls`` is one of required/none/some/all."""
    if nulls == "all":
        return [None] * n
    edges = _edges(name, typ)
    pool = [_fresh(name, typ, rng) for _ in range(40)]
    out = []
    for _ in range(n):
        r = rng.random()
        if nulls == "some" and r < 0.15:
            out.append(None)
        elif edges and r < 0.25:
            out.append(rng.choice(edges))
        elif r < 0.7:
            out.append(rng.choice(pool))
        else:
            out.append(_fresh(name, typ, rng))
    # A run of nulls and a run of one value, to exercise RLE runs across pages.
    if nulls == "some" and n > 400:
        out[100:300] = [None] * 200
    if n > 800:
        v = pool[0]
        out[500:800] = [v] * 300
    return out


def make_table(columns: dict[str, pa.DataType], n: int, seed: int, nulls: str = "some") -> pa.Table:
    """A table with the given columns; ``nulls='required'`` makes every field non-nullable."""
    rng = random.Random(seed)
    arrays, fields = [], []
    for name, typ in columns.items():
        arrays.append(pa.array(column_values(name, typ, n, rng, nulls), type=typ))
        fields.append(pa.field(name, typ, nullable=(nulls != "required")))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def write(table: pa.Table, path: Path, **options) -> Path:
    """Writes with many small pages and several row groups unless told otherwise."""
    opts = dict(
        row_group_size=1000,
        data_page_size=512,
        write_batch_size=64,
        compression="snappy",
    )
    opts.update(options)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, str(path), **opts)
    return path


def row_count(path: Path) -> int:
    """Rows in one file or every Parquet file under a folder, per pyarrow's footers."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*.parquet"))
    return sum(pq.ParquetFile(str(f)).metadata.num_rows for f in files)
