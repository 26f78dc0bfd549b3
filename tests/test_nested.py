"""Nested columns (struct, list, map, at any depth), differentially, through real PySpark sessions.

A seeded property suite over ``N_TABLES`` tables, each a folder of 1-3 files sharing one schema.

``N_RANDOM_TABLES`` tables have a random schema: a unique ``id``, two flat columns (``f_int``,
``f_str``) and 2-4 nested columns of depth 1 to 4 (structs of lists of structs, maps with struct
values, lists of maps, ...), every level optional or required, leaves of every flat type (integers
of every width, signed and unsigned, float, double, string, binary, fixed binary, bool, date,
timestamps micros / millis / NTZ, decimals of 5 to 38 digits). The data has nulls at every level,
empty lists and maps, null lists, lists of nulls, maps with null values, whole columns of nulls
and, in some tables, lists of hundreds of elements that span pages. Each file is written by:

- pyarrow, with random options: data page v1 / v2, page index on / off, dictionary on / off / only
  some columns / overflowing to plain, ``use_compliant_nested_type`` on (``list.element``) and off
  (``list.item``), decimals as integers or fixed binary, INT96 timestamps, DELTA encodings (on
  non-repeated leaves) and BYTE_STREAM_SPLIT, bloom filters, page checksums, codecs, tiny pages
  (``data_page_size=1``), one row per page (``max_rows_per_page=1``), row groups of a few rows;
- or Spark itself (``df.write.parquet``) with ``spark.sql.parquet.writeLegacyFormat`` on and off
  and the file's own nullability, so that Spark's legacy layouts appear: 3-level lists named
  ``bag`` / ``array``, 2-level lists (``repeated int32 array``; ``repeated group array`` whose
  single field is the element struct; ``repeated group array (LIST)`` for lists of lists),
  ``MAP_KEY_VALUE`` maps, INT96 timestamps, fixed-length decimals; v1 / v2 pages, one row per page
  (``parquet.page.row.count.limit=1``), small pages and row groups.

``N_LEGACY_TABLES`` tables have a fixed schema of the layouts neither pyarrow nor Spark writes,
written with parquet-java's example writer through py4j (``make_legacy_spec``): lists as bare
repeated fields without a LIST annotation (protobuf-style; primitives and groups, inside structs
and inside other bare repeated groups), parquet-thrift's ``<name>_tuple`` groups, 2-level lists
whose repeated group is named ``element``, 3-level lists with other names, Hive's maps
(``MAP_KEY_VALUE``).

Each table gets ``CASES_PER_TABLE`` random queries: projections of whole columns and of pruned
paths (``n1.a.b``, ``get(l, 0).x``, ``l.x`` on a list of structs, ``transform`` over lists,
``m[key]``, ``map_keys`` / ``map_values`` / ``transform_values``, ``size``), ``explode`` /
``posexplode`` of lists and maps, aggregates, ``ORDER BY ... LIMIT``; filters on flat columns and on
non-repeated struct fields (``n1.a = 3``, ``n1.b.c IS NULL``, ranges, IN, ``<=>``, LIKE), on whole
structs, and on elements (``array_contains``, ``exists``, ``forall``, ``size``, map lookups) which
must stay in Spark's Filter (they may not appear in lmspark's pruning predicate). Every case is
compared with vanilla Spark (lmspark off, Parquet filter pushdown off): as a multiset of rows, or
in order when the query orders (the order is made total by ``id``). Vanilla's vectorized reader
is the reference; where it fails or disagrees with Spark's row-based (parquet-java) reader, for a
table or for one query, the row-based reader is, and a ``VanillaReaderNote`` warning says so.

Speed: cases run in batches of ``BATCH`` (one UNION ALL query, each case's rows as exact JSON text
tagged with its number; a batch that fails as a whole is rerun case by case), the reference once
per batch, lmspark under ``COMBOS_PER_BATCH`` flag combinations per batch; ordered cases run alone.
The flag combinations (``spark.lmspark.*``: late materialization, page index, statistics /
dictionary / bloom / guarantee pruning, dictionary predicates and preservation, predicate cache,
batch size, selection policy and threshold, output mode, decode-whole knobs, metadata cache, IO
knobs, checksums) are planned up front from the seed: every combination of the core flags (late
materialization x page index x output x batch size x selection policy) runs, and every pair of
values of any two flags runs (``test_flag_plan_covers_every_pair``).

lmspark must read the files itself (``REQUIRE_LM``): every Parquet scan of the reference must be an
``LmParquetScan`` that handed no file to Spark's reader (``conftest.assert_lm_read_everything``).
While lmspark declines some nested columns, set ``LMSPARK_NESTED_ALLOW_FALLBACK=1`` to check only
the answers, and that every scan is served or cleanly declined (a reason in the plan).

Replay: the seed is ``LMSPARK_TEST_SEED`` (default below); a failure prints it with the table (its
parts, writers and options, schema), the SQL and the flags. ``-k t07`` runs one table;
``LMSPARK_NESTED_CASE=t07:13`` runs only case 13 of table t07, on its own (no UNION), under each of
its flag combinations.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import itertools
import os
import random
import re
import shutil
import string
import warnings
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T

import datagen
from conftest import (
    LM_CONF,
    LM_NODE,
    REFERENCE_CONF,
    SPARK_NODE,
    assert_lm_read_everything,
    capture_lm_log,
    conf,
    describe_difference,
    error_summary,
    executed_plan,
    fallback_reasons,
    lm_status,
    normalise,
    run_query_full,
)
from lmspark import conf as C

SEED = int(os.environ.get("LMSPARK_TEST_SEED", "20261126"))
#: lmspark must read every file itself (no whole-scan or per-file fallback).
REQUIRE_LM = True
#: Set to 1 to skip only the REQUIRE_LM check (while lmspark still declines nested columns).
ALLOW_FALLBACK_ENV = "LMSPARK_NESTED_ALLOW_FALLBACK"
#: ``t07:13``: run only that case, alone, under each of its flag combinations.
CASE_ENV = "LMSPARK_NESTED_CASE"

N_RANDOM_TABLES = 28  # random schemas, written by pyarrow and Spark
N_LEGACY_TABLES = 2  # fixed legacy layouts, written by parquet-java (see make_legacy_spec)
N_TABLES = N_RANDOM_TABLES + N_LEGACY_TABLES
CASES_PER_TABLE = 20
BATCH = 10
COMBOS_PER_BATCH = 2
BATCHES_PER_TABLE = -(-CASES_PER_TABLE // BATCH)


def _require_lm() -> bool:
    return REQUIRE_LM and os.environ.get(ALLOW_FALLBACK_ENV, "") not in ("1", "true", "yes")


# --------------------------------------------------------------------------------------------
# Leaf types: pyarrow type, value generator, SQL literal
# --------------------------------------------------------------------------------------------

EPOCH = dt.date(1970, 1, 1)
EPOCH_DT = dt.datetime(1970, 1, 1)
_ALPHABET = string.ascii_letters + string.digits + " _-'%\\" + "éüß中文字😀\u0301\u00a0"


def _quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _float_text(v: float) -> str:
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def _ts_text(us: int) -> str:
    d = EPOCH_DT + dt.timedelta(microseconds=us)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}:{d.second:02d}.{d.microsecond:06d}"


def _decimal(unscaled: int, scale: int) -> decimal.Decimal:
    """Exact (no context rounding: 38 digits are more than the default context's 28)."""
    return decimal.Decimal(f"{unscaled}E-{scale}")


@dataclasses.dataclass(frozen=True)
class LeafKind:
    name: str
    pa_type: pa.DataType
    key_ok: bool = False  # usable as a map key (its to_json key text is exact)

    @property
    def is_decimal(self) -> bool:
        return pa.types.is_decimal(self.pa_type)

    @property
    def is_ntz(self) -> bool:
        return pa.types.is_timestamp(self.pa_type) and self.pa_type.tz is None

    def fresh(self, rng: random.Random):
        t = self.pa_type
        if pa.types.is_boolean(t):
            return rng.random() < 0.5
        if pa.types.is_integer(t):
            bits = t.bit_width
            lo, hi = (0, 2**bits - 1) if pa.types.is_unsigned_integer(t) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
            return rng.randint(lo, hi) if rng.random() < 0.4 else max(lo, min(hi, rng.randint(-50, 50)))
        if pa.types.is_floating(t):
            return rng.choice((1, -1)) * rng.random() * 10 ** rng.randint(-8, 8)
        if pa.types.is_decimal(t):
            digits = rng.randint(0, t.precision)
            unscaled = rng.randint(-(10**digits) + 1, 10**digits - 1) if digits else 0
            return _decimal(unscaled, t.scale)
        if pa.types.is_date32(t):
            return rng.randint(datagen.DATE_MIN, datagen.DATE_MAX) if rng.random() < 0.3 else rng.randint(-20000, 40000)
        if pa.types.is_timestamp(t):
            us = rng.randint(datagen.TS_MIN_US, datagen.TS_MAX_US) if rng.random() < 0.3 else rng.randint(-(10**15), 4 * 10**15)
            return us // 1000 if t.unit == "ms" else us
        if pa.types.is_fixed_size_binary(t):
            return bytes(rng.getrandbits(8) for _ in range(t.byte_width))
        if pa.types.is_binary(t):
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 12)))
        if pa.types.is_string(t):
            return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 12)))
        raise ValueError(self.name)

    def edges(self) -> list:
        t = self.pa_type
        if pa.types.is_boolean(t):
            return [True, False]
        if pa.types.is_integer(t):
            bits = t.bit_width
            lo, hi = (0, 2**bits - 1) if pa.types.is_unsigned_integer(t) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
            return [lo, hi, 0, 1, lo + 1, hi - 1]
        if pa.types.is_float32(t):
            return datagen.EDGES["c_float"]
        if pa.types.is_float64(t):
            return datagen.EDGES["c_double"]
        if pa.types.is_decimal(t):
            top = 10**t.precision - 1
            return [_decimal(top, t.scale), _decimal(-top, t.scale), _decimal(0, t.scale), _decimal(1, t.scale)]
        if pa.types.is_date32(t):
            return datagen.EDGES["c_date"]
        if pa.types.is_timestamp(t):
            return [v // 1000 if t.unit == "ms" else v for v in datagen.EDGES["c_ts_us"]]
        if pa.types.is_fixed_size_binary(t):
            return [b"\x00" * t.byte_width, b"\xff" * t.byte_width]
        if pa.types.is_binary(t):
            return [b"", b"\x00", b"\xff" * 20]
        if pa.types.is_string(t):
            return ["", " ", "a", "😀", "e\u0301", "null", "x" * 200]
        return []

    def literal(self, v) -> str:
        """A SQL literal of the Spark type this leaf is read as."""
        t = self.pa_type
        if v is None:
            return "NULL"
        if pa.types.is_boolean(t):
            return "true" if v else "false"
        if pa.types.is_integer(t):
            return str(v)
        if pa.types.is_float32(t):
            return f"CAST('{_float_text(v)}' AS FLOAT)"
        if pa.types.is_float64(t):
            return f"CAST('{_float_text(v)}' AS DOUBLE)"
        if pa.types.is_decimal(t):
            return f"CAST('{format(v, 'f')}' AS DECIMAL({t.precision},{t.scale}))"
        if pa.types.is_date32(t):
            return f"DATE'{(EPOCH + dt.timedelta(days=v)).isoformat()}'"
        if pa.types.is_timestamp(t):
            us = v * 1000 if t.unit == "ms" else v
            return f"{'TIMESTAMP_NTZ' if t.tz is None else 'TIMESTAMP'}'{_ts_text(us)}'"
        if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
            return "X'" + bytes(v).hex().upper() + "'"
        if pa.types.is_string(t):
            return _quote(v)
        raise ValueError(self.name)


LEAVES: list[LeafKind] = [
    LeafKind("bool", pa.bool_(), key_ok=True),
    LeafKind("int8", pa.int8(), key_ok=True),
    LeafKind("int16", pa.int16(), key_ok=True),
    LeafKind("int32", pa.int32(), key_ok=True),
    LeafKind("int64", pa.int64(), key_ok=True),
    LeafKind("uint8", pa.uint8()),
    LeafKind("uint16", pa.uint16()),
    LeafKind("uint32", pa.uint32()),
    LeafKind("uint64", pa.uint64()),
    LeafKind("float", pa.float32()),
    LeafKind("double", pa.float64()),
    LeafKind("string", pa.string(), key_ok=True),
    LeafKind("binary", pa.binary()),
    LeafKind("fixed4", pa.binary(4)),
    LeafKind("date", pa.date32(), key_ok=True),
    LeafKind("ts_us", pa.timestamp("us", tz="UTC"), key_ok=True),
    LeafKind("ts_ms", pa.timestamp("ms", tz="UTC")),
    LeafKind("ntz_us", pa.timestamp("us")),
    LeafKind("ntz_ms", pa.timestamp("ms")),
    LeafKind("dec5_2", pa.decimal128(5, 2)),
    LeafKind("dec9_2", pa.decimal128(9, 2), key_ok=True),
    LeafKind("dec18_4", pa.decimal128(18, 4)),
    LeafKind("dec30_5", pa.decimal128(30, 5)),
    LeafKind("dec38_10", pa.decimal128(38, 10)),
]
KEY_LEAVES = [k for k in LEAVES if k.key_ok]
LEAF_BY_NAME = {k.name: k for k in LEAVES}


# --------------------------------------------------------------------------------------------
# Nested type trees
# --------------------------------------------------------------------------------------------


class Node:
    """A type. ``samples`` collects values generated at this position (for literals)."""

    def __init__(self):
        self.samples: list = []
        self.key_samples: list = []
        self.pool: list | None = None


class Leaf(Node):
    def __init__(self, kind: LeafKind):
        super().__init__()
        self.kind = kind


class Struct(Node):
    def __init__(self, fields: list[tuple[str, Node, bool]]):
        super().__init__()
        self.fields = fields  # (name, type, nullable)


class ListN(Node):
    """``layout``: how the parquet-java-written legacy tables lay it out (see ``_pj_field``)."""

    def __init__(self, elem: Node, elem_nullable: bool, large: bool, layout: str = ""):
        super().__init__()
        self.elem, self.elem_nullable, self.large, self.layout = elem, elem_nullable, large, layout


class MapN(Node):
    def __init__(self, key: Leaf, value: Node, value_nullable: bool, layout: str = ""):
        super().__init__()
        self.key, self.value, self.value_nullable, self.layout = key, value, value_nullable, layout


def depth(n: Node) -> int:
    if isinstance(n, Leaf):
        return 0
    if isinstance(n, Struct):
        return 1 + max(depth(c) for _, c, _ in n.fields)
    if isinstance(n, ListN):
        return 1 + depth(n.elem)
    return 1 + depth(n.value)


def pa_type(n: Node) -> pa.DataType:
    if isinstance(n, Leaf):
        return n.kind.pa_type
    if isinstance(n, Struct):
        return pa.struct([pa.field(name, pa_type(c), nullable=nb) for name, c, nb in n.fields])
    if isinstance(n, ListN):
        make = pa.large_list if n.large else pa.list_
        # named "item" (pyarrow's default): written as "element" under use_compliant_nested_type,
        # as "item" without it
        return make(pa.field("item", pa_type(n.elem), nullable=n.elem_nullable))
    return pa.map_(pa.field("key", n.key.kind.pa_type, nullable=False),
                   pa.field("value", pa_type(n.value), nullable=n.value_nullable))


def describe(n: Node) -> str:
    """Compact type text; ``!`` marks a required (non-nullable) position."""
    req = lambda nb: "" if nb else "!"  # noqa: E731
    if isinstance(n, Leaf):
        return n.kind.name
    if isinstance(n, Struct):
        return "struct<" + ",".join(f"{name}:{describe(c)}{req(nb)}" for name, c, nb in n.fields) + ">"
    layout = f"[{n.layout}]" if n.layout else ""
    if isinstance(n, ListN):
        return f"{'large_' if n.large else ''}list{layout}<{describe(n.elem)}{req(n.elem_nullable)}>"
    return f"map{layout}<{n.key.kind.name},{describe(n.value)}{req(n.value_nullable)}>"


def walk(n: Node):
    yield n
    if isinstance(n, Struct):
        for _, c, _ in n.fields:
            yield from walk(c)
    elif isinstance(n, ListN):
        yield from walk(n.elem)
    elif isinstance(n, MapN):
        yield n.key
        yield from walk(n.value)


def with_nullability(dtype: T.DataType, n: Node) -> T.DataType:
    """Spark's type for ``n`` (as Spark read it, all nullable) with the tree's nullability."""
    if isinstance(n, Struct):
        return T.StructType([
            T.StructField(f.name, with_nullability(f.dataType, c), nb)
            for f, (_, c, nb) in zip(dtype.fields, n.fields)
        ])
    if isinstance(n, ListN):
        return T.ArrayType(with_nullability(dtype.elementType, n.elem), n.elem_nullable)
    if isinstance(n, MapN):
        return T.MapType(dtype.keyType, with_nullability(dtype.valueType, n.value), n.value_nullable)
    return dtype


def gen_type(rng: random.Random, d: int, names=("a", "b", "c", "d", "e")) -> Node:
    """A random type of nesting depth exactly ``d`` (0: a leaf)."""
    if d == 0:
        return Leaf(rng.choice(LEAVES))
    kind = rng.choices(["struct", "list", "map"], weights=[4, 3, 2])[0]
    if kind == "struct":
        width = rng.choice([1, 1, 2, 2, 3, 4])
        deep = rng.randrange(width)
        return Struct([
            (names[i], gen_type(rng, d - 1 if i == deep else rng.randint(0, d - 1)), rng.random() < 0.7)
            for i in range(width)
        ])
    if kind == "list":
        return ListN(gen_type(rng, d - 1), rng.random() < 0.7, rng.random() < 0.15)
    return MapN(Leaf(rng.choice(KEY_LEAVES)), gen_type(rng, d - 1), rng.random() < 0.7)


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Profile:
    null_p: float  # chance that a nullable position is null
    empty_p: float  # chance that a list or map is empty
    long_p: float  # chance that an outermost list is long (spans pages)
    all_null_elems_p: float  # chance that a list of nullable elements holds only nulls


def _leaf_value(node: Leaf, rng: random.Random):
    if node.pool is None:
        node.pool = [node.kind.fresh(rng) for _ in range(8)]
    r = rng.random()
    edges = node.kind.edges()
    if edges and r < 0.15:
        v = rng.choice(edges)
    elif r < 0.7:
        v = rng.choice(node.pool)
    else:
        v = node.kind.fresh(rng)
    return v


#: The longest list or map generated (the layout test checks that some span pages).
LONGEST = [0]


def _remember(store: list, v, rng: random.Random) -> None:
    if len(store) < 60:
        store.append(v)
    elif rng.random() < 0.1:
        store[rng.randrange(60)] = v


def gen_value(n: Node, rng: random.Random, prof: Profile, outer: bool):
    """A non-null value of type ``n``; ``outer``: no list or map above (long lists allowed)."""
    if isinstance(n, Leaf):
        v = _leaf_value(n, rng)
        _remember(n.samples, v, rng)
        return v
    if isinstance(n, Struct):
        return {name: gen_opt(c, nb, rng, prof, outer) for name, c, nb in n.fields}
    r = rng.random()
    if r < prof.empty_p:
        size = 0
    elif outer and r < prof.empty_p + prof.long_p and depth(n) <= 2:
        size = rng.randint(80, 700 if depth(n) == 1 else 120)
    else:
        size = rng.choice([1, 1, 2, 3, 4])
    LONGEST[0] = max(LONGEST[0], size)
    if isinstance(n, ListN):
        if n.elem_nullable and size and rng.random() < prof.all_null_elems_p:
            return [None] * size
        return [gen_opt(n.elem, n.elem_nullable, rng, prof, False) for _ in range(size)]
    keys, seen = [], set()
    for _ in range(size):
        k = _leaf_value(n.key, rng)
        if k not in seen:
            seen.add(k)
            keys.append(k)
            _remember(n.key_samples, k, rng)
    return [(k, gen_opt(n.value, n.value_nullable, rng, prof, False)) for k in keys]


def gen_opt(n: Node, nullable: bool, rng: random.Random, prof: Profile, outer: bool):
    if nullable and rng.random() < prof.null_p:
        return None
    return gen_value(n, rng, prof, outer)


# --------------------------------------------------------------------------------------------
# Tables: schema, parts, writers
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Column:
    name: str
    node: Node
    nullable: bool


@dataclasses.dataclass
class Part:
    name: str
    writer: str  # "pyarrow", "spark" (df.write.parquet) or "parquet-java" (its example writer)
    rows: int
    options: dict
    seed: int


@dataclasses.dataclass
class TableSpec:
    index: int
    key: str  # t07
    columns: list[Column]
    parts: list[Part]
    profile: Profile
    folder: Path | None = None
    view: str = ""
    spark_schema: str = ""
    #: the reference's confs: vanilla Spark, pushdown off; its row-based reader where the
    #: vectorized one cannot read the table (``reference_note`` says why)
    reference: dict = dataclasses.field(default_factory=lambda: dict(REFERENCE_CONF))
    reference_note: str = ""

    def describe(self) -> str:
        cols = ", ".join(f"{c.name} {describe(c.node)}{'' if c.nullable else '!'}" for c in self.columns)
        parts = "\n".join(f"    {p.name}: {p.writer}, {p.rows} rows, {p.options}" for p in self.parts)
        ref = f"\n  reference: Spark's row-based reader ({self.reference_note})" if self.reference_note else ""
        return (f"table {self.key} at {self.folder} (view {self.view}), profile {self.profile}{ref}\n"
                f"  columns (pyarrow, ! = required): {cols}\n  Spark schema: {self.spark_schema}\n"
                f"  parts:\n{parts}")


CODECS = ["none", "snappy", "zstd", "gzip", "lz4"]


def _pyarrow_options(rng: random.Random, has_ntz: bool) -> dict:
    o: dict = {
        "compression": rng.choice(CODECS),
        "data_page_version": rng.choice(["1.0", "2.0"]),
        "write_page_index": rng.random() < 0.5,
        "use_compliant_nested_type": rng.random() < 0.6,
        "store_decimal_as_integer": rng.random() < 0.5,
        "row_group_size": rng.choice([3, 20, 64, 150, 100_000]),
        "data_page_size": rng.choice([1, 64, 512, 4096, 1 << 20]),
        "write_batch_size": rng.choice([1, 7, 64, 1024]),
    }
    r = rng.random()
    if r < 0.2:
        o["max_rows_per_page"] = 1  # one row per page
    elif r < 0.35:
        o["max_rows_per_page"] = rng.choice([2, 5])
    r = rng.random()
    if r < 0.25:
        o["use_dictionary"] = False
        o["encodings"] = "delta"  # resolved to column_encoding per leaf in _write_pyarrow
    elif r < 0.4:
        o["use_dictionary"] = False
    elif r < 0.5:
        o["use_dictionary"] = "some"  # resolved to a list of leaf paths
    elif r < 0.6:
        o["dictionary_pagesize_limit"] = 64  # dictionaries overflow to plain pages
    if rng.random() < 0.2:
        o["bloom_filters"] = True
    if rng.random() < 0.3:
        o["write_page_checksum"] = True
    if not has_ntz and rng.random() < 0.15:
        o["use_deprecated_int96_timestamps"] = True
    return o


def _spark_options(rng: random.Random, legacy: bool) -> dict:
    o = {
        "spark.sql.parquet.writeLegacyFormat": "true" if legacy else "false",
        "spark.sql.parquet.outputTimestampType": rng.choice(["INT96", "TIMESTAMP_MICROS", "TIMESTAMP_MILLIS"]),
        "spark.sql.parquet.compression.codec": rng.choice(["uncompressed", "snappy", "zstd", "gzip"]),
        "parquet.writer.version": rng.choice(["PARQUET_1_0", "PARQUET_2_0"]),
        "parquet.enable.dictionary": rng.choice(["true", "false"]),
        "files": rng.choice([1, 2]),
    }
    r = rng.random()
    if r < 0.3:
        o["parquet.page.row.count.limit"] = rng.choice(["1", "3"])
    elif r < 0.6:
        o["parquet.page.size"] = rng.choice(["64", "1024"])
    if rng.random() < 0.3:
        o["parquet.block.size"] = "4096"
        o["parquet.block.size.row.check.min"] = "10"
        o["parquet.block.size.row.check.max"] = "10"
    return o


def _writers_for(index: int, rng: random.Random) -> list[tuple[str, bool]]:
    """(writer, legacy) per part. Fixed by index, so that every kind of table exists."""
    kind = index % 7
    if kind == 0:
        return [("spark", True)]
    if kind == 1:
        return [("pyarrow", False), ("spark", False)]
    if kind == 2:
        return [("pyarrow", False), ("spark", True)]
    if kind == 3:
        return [("spark", False)] if index % 2 else [("spark", True), ("spark", False)]
    return [("pyarrow", False)] * rng.choice([1, 2, 2, 3])


def make_legacy_spec(index: int) -> TableSpec:
    """Layouts neither pyarrow nor Spark writes, written with parquet-java's example writer: lists
    as bare repeated fields (no LIST annotation, primitive and group, nested in structs and
    in bare repeated groups), thrift's ``<name>_tuple`` element groups, 2-level lists whose repeated group is
    named ``element``, 3-level lists with other names (``foo`` / ``bar``), Hive's maps (a
    ``MAP_KEY_VALUE`` repeated group named ``map``, or ``MAP_KEY_VALUE`` on the outer group).
    Leaves are int32, double, string and boolean only (py4j's Python ints go to Java as int)."""
    rng = random.Random(SEED * 7919 + index)
    leaf = lambda name: Leaf(LEAF_BY_NAME[name])  # noqa: E731
    columns = [
        Column("id", leaf("int32"), False),
        Column("f_int", leaf("int32"), True),
        Column("f_str", leaf("string"), True),
        Column("n_rint", ListN(leaf("int32"), False, False, "bare"), False),
        Column("n_rs", ListN(Struct([
            ("a", leaf("double"), True),
            ("c", ListN(leaf("string"), False, False, "bare"), False),
            ("d", MapN(leaf("string"), leaf("int32"), True, "hive"), True),
        ]), False, False, "bare"), False),
        Column("n_lt", ListN(Struct([("a", leaf("int32"), False)]), False, False, "tuple"), True),
        Column("n_le", ListN(Struct([("a", leaf("int32"), True), ("b", leaf("bool"), True)]), False, False,
                             "element"), True),
        Column("n_lp", ListN(leaf("double"), False, False, "element"), True),
        Column("n_l3", ListN(leaf("string"), True, False, "foo_bar"), True),
        Column("n_m", MapN(leaf("string"), ListN(leaf("int32"), True, False, "foo_bar"), True, "hive"), True),
        Column("n_k", MapN(leaf("int32"), leaf("double"), True, "kv_outer"), True),
        Column("n_s", Struct([
            ("inner", ListN(leaf("int32"), False, False, "bare"), False),
            ("l", ListN(Struct([("x", leaf("string"), True), ("y", leaf("int32"), True)]), False, False, "tuple"),
             True),
            ("z", leaf("bool"), True),
        ]), True),
    ]
    profile = Profile(null_p=rng.choice([0.1, 0.3]), empty_p=0.15, long_p=0.03, all_null_elems_p=0.1)
    parts = []
    for j in range(2):
        opts = {
            "writer_version": rng.choice(["PARQUET_1_0", "PARQUET_2_0"]),
            "dictionary": rng.random() < 0.5,
            "codec": rng.choice(["UNCOMPRESSED", "SNAPPY", "ZSTD", "GZIP"]),
            "page_row_count_limit": rng.choice([1, 3, 20000]),
            "page_size": rng.choice([64, 1024, 1 << 20]),
            "row_group_size": rng.choice([2048, 1 << 27]),
            "checksums": rng.random() < 0.5,
            "bloom_filters": rng.random() < 0.3,
        }
        parts.append(Part(f"p{j}-parquet-java", "parquet-java", rng.randint(80, 250), opts, rng.randrange(2**31)))
    return TableSpec(index, f"t{index:02d}", columns, parts, profile)


def make_spec(index: int) -> TableSpec:
    if index >= N_RANDOM_TABLES:
        return make_legacy_spec(index)
    rng = random.Random(SEED * 7919 + index)
    n_nested = rng.choice([2, 3, 3, 4])
    depths = [index % 4 + 1] + [rng.choice([1, 1, 2, 2, 3, 4]) for _ in range(n_nested - 1)]
    columns = [Column("id", Leaf(LEAF_BY_NAME["int64"]), False),
               Column("f_int", Leaf(LEAF_BY_NAME["int32"]), True),
               Column("f_str", Leaf(LEAF_BY_NAME["string"]), True)]
    for i, d in enumerate(depths):
        columns.append(Column(f"n{i}", gen_type(rng, d), rng.random() < 0.75))
    writers = _writers_for(index, rng)
    if any(legacy for _, legacy in writers):
        # the legacy layouts need them: a list of required elements (2-level), a list of one-field
        # structs (2-level, element ambiguity), a map
        nodes = [n for c in columns for n in walk(c.node)]
        if not any(isinstance(n, ListN) and not n.elem_nullable for n in nodes):
            columns.append(Column("n_req", ListN(Leaf(rng.choice(LEAVES)), False, False), True))
        if not any(isinstance(n, ListN) and not n.elem_nullable and isinstance(n.elem, Struct)
                   and len(n.elem.fields) == 1 for n in nodes):
            inner = Struct([("x", Leaf(rng.choice(LEAVES)), rng.random() < 0.5)])
            columns.append(Column("n_one", ListN(inner, False, False), True))
        if not any(isinstance(n, MapN) for n in nodes):
            columns.append(Column("n_map", MapN(Leaf(rng.choice(KEY_LEAVES)), gen_type(rng, 1), True), True))
    has_ntz = any(isinstance(n, Leaf) and n.kind.is_ntz for c in columns for n in walk(c.node))
    profile = Profile(
        null_p=rng.choice([0.0, 0.05, 0.2, 0.5]),
        empty_p=rng.choice([0.05, 0.15, 0.3]),
        long_p=rng.choice([0.0, 0.0, 0.02, 0.05]),
        all_null_elems_p=rng.choice([0.0, 0.05, 0.2]),
    )
    parts = []
    for j, (writer, legacy) in enumerate(writers):
        opts = _pyarrow_options(rng, has_ntz) if writer == "pyarrow" else _spark_options(rng, legacy)
        parts.append(Part(f"p{j}-{writer}", writer, rng.randint(60, 320), opts, rng.randrange(2**31)))
    return TableSpec(index, f"t{index:02d}", columns, parts, profile)


def _ensure_legacy_list_of_lists(specs: list[TableSpec]) -> list[TableSpec]:
    """Spark's legacy writer lays out a list of required lists as a 2-level list of lists
    (``repeated group array (LIST)``). Where no table of the seed has one under a legacy writer, the
    first table with a legacy part gets such a column, so every seed writes that layout; the tables
    of a seed that has one stay as generated."""
    def legacy(spec):
        return any(p.options.get("spark.sql.parquet.writeLegacyFormat") == "true" for p in spec.parts)

    def has(spec):
        return any(isinstance(n, ListN) and not n.elem_nullable and isinstance(n.elem, ListN)
                   for c in spec.columns for n in walk(c.node))

    if not any(legacy(s) and has(s) for s in specs):
        spec = next((s for s in specs if legacy(s)), None)
        if spec is not None:
            inner = ListN(Leaf(LEAF_BY_NAME["int32"]), True, False)
            spec.columns.append(Column("n_ll", ListN(inner, False, False), True))
    return specs


SPECS = _ensure_legacy_list_of_lists([make_spec(i) for i in range(N_TABLES)])


def gen_part_table(spec: TableSpec, part_index: int) -> pa.Table:
    part = spec.parts[part_index]
    rng = random.Random(part.seed)
    n = part.rows
    all_null = {c.name for c in spec.columns if c.nullable and c.name.startswith("n") and rng.random() < 0.04}
    data = {c.name: [] for c in spec.columns}
    for r in range(n):
        for c in spec.columns:
            if c.name == "id":
                v = part_index * 1_000_000 + r
            elif c.name == "f_int":
                v = None if rng.random() < 0.1 else rng.randint(-20, 20)
            elif c.name == "f_str":
                v = None if rng.random() < 0.1 else rng.choice(["", "a", "ab", "b", "zz", "é", "x y"])
            elif c.name in all_null:
                v = None
            else:
                v = gen_opt(c.node, c.nullable, rng, spec.profile, True)
            if c.name in ("f_int", "f_str") and v is not None:
                _remember(c.node.samples, v, rng)
            data[c.name].append(v)
    fields = [pa.field(c.name, pa_type(c.node), nullable=c.nullable) for c in spec.columns]
    return pa.Table.from_arrays([pa.array(data[f.name], type=f.type) for f in fields], schema=pa.schema(fields))


def _leaf_paths(table: pa.Table, opts: dict) -> list[tuple[str, str]]:
    """(path, physical type) of every leaf column as pyarrow will write them."""
    buf = pa.BufferOutputStream()
    keys = ("use_compliant_nested_type", "store_decimal_as_integer", "use_deprecated_int96_timestamps")
    pq.write_table(table.slice(0, 0), buf, **{k: opts[k] for k in keys if k in opts})
    md = pq.read_metadata(pa.BufferReader(buf.getvalue()))
    return [(md.schema.column(i).path, md.schema.column(i).physical_type) for i in range(md.num_columns)]


_DELTA = {
    "INT32": ["DELTA_BINARY_PACKED", "PLAIN"],
    "INT64": ["DELTA_BINARY_PACKED", "PLAIN"],
    "BYTE_ARRAY": ["DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "PLAIN"],
    "FLOAT": ["BYTE_STREAM_SPLIT", "PLAIN"],
    "DOUBLE": ["BYTE_STREAM_SPLIT", "PLAIN"],
    "FIXED_LEN_BYTE_ARRAY": ["DELTA_BYTE_ARRAY", "PLAIN"],
}


def _write_pyarrow(table: pa.Table, path: Path, options: dict, rng: random.Random) -> dict:
    """Writes with the part's options; returns the options actually passed."""
    opts = {k: v for k, v in options.items() if k not in ("encodings", "bloom_filters")}
    paths = _leaf_paths(table, opts)
    if options.get("encodings") == "delta":
        enc = {}
        for p, t in paths:
            choices = list(_DELTA.get(t, []))
            if any(seg in ("list", "key_value") for seg in p.split(".")[1:]):
                # Repeated leaves: BYTE_STREAM_SPLIT or PLAIN only. pyarrow 26's DELTA_BYTE_ARRAY
                # pages of repeated columns are unreadable (by pyarrow too: "Values read exceeded
                # upper bound"), and its DELTA pages of repeated columns holding no value fail
                # both of vanilla Spark's readers ("Page must have at least one value", "Reading
                # past RLE/BitPacking stream"): vanilla Spark could not be the reference.
                choices = [c for c in choices if not c.startswith("DELTA")]
            if choices:
                enc[p] = rng.choice(choices)
        opts["column_encoding"] = enc
    if opts.get("use_dictionary") == "some":
        opts["use_dictionary"] = [p for p, _ in paths if rng.random() < 0.5]
    if options.get("bloom_filters"):
        opts["bloom_filter_options"] = {p: {"ndv": max(8, table.num_rows), "fpp": 0.05}
                                        for p, t in paths if t != "BOOLEAN" and rng.random() < 0.5}
    note = None
    for retry in ({}, {"data_page_size": 1 << 20}, {"use_dictionary": False, "data_page_size": 1 << 20}):
        opts.update(retry)
        pq.write_table(table, str(path), **opts)
        try:
            back = pq.read_table(str(path), coerce_int96_timestamp_unit="us")
            if not back.schema.equals(table.schema):
                # Only where the types differ (INT96 read back as timestamps of another kind): a cast
                # refuses a null under a null struct in a non-nullable field, which pyarrow reads back
                back = back.cast(table.schema)
        except Exception as e:  # noqa: BLE001
            # pyarrow 26 sometimes writes files that neither it nor parquet-java reads back (a
            # null struct row over map and list leaves, dictionary-encoded, 1-byte pages): rewrite
            note = f"rewritten: pyarrow could not read back the first write ({str(e)[:80]})"
            continue
        assert [normalise(v) for v in back.to_pylist()] == [normalise(v) for v in table.to_pylist()], (
            f"pyarrow does not read back what it wrote to {path} with {opts}")
        return {**opts, "note": note} if note else opts
    raise AssertionError(f"pyarrow cannot read back {path} written with {opts}: {note}")


_HADOOP_KEYS = ("parquet.",)


def _write_spark(spark, spec: TableSpec, table: pa.Table, folder: Path, part: Part, scratch: Path) -> None:
    """Spark writes the part's rows (read from a pyarrow file) with the columns' nullability."""
    src = scratch / f"{spec.key}-{part.name}-src.parquet"
    out = scratch / f"{spec.key}-{part.name}-out"
    pq.write_table(table, str(src))
    sql_conf = {k: v for k, v in part.options.items() if k.startswith("spark.")}
    hadoop = {k: v for k, v in part.options.items() if k.startswith(_HADOOP_KEYS)}
    with conf(spark, {**REFERENCE_CONF, **sql_conf}):
        df = spark.read.parquet(str(src))
        schema = T.StructType([
            T.StructField(c.name, with_nullability(df.schema[c.name].dataType, c.node), c.nullable)
            for c in spec.columns
        ])
        jschema = spark._jvm.org.apache.spark.sql.types.DataType.fromJson(schema.json())
        jdf = spark._jsparkSession.createDataFrame(df._jdf.javaRDD(), jschema)
        writer = jdf.repartition(part.options["files"]).write().mode("overwrite")
        for k, v in hadoop.items():
            writer = writer.option(k, v)
        writer.parquet(str(out))
    for i, f in enumerate(sorted(out.glob("part-*.parquet"))):
        shutil.move(str(f), str(folder / f"{part.name}-{i}.parquet"))


_PJ_PRIMITIVE = {"int32": "int32", "double": "double", "string": "binary", "bool": "boolean"}


def _pj_field(name: str, n: Node, rep: str) -> str:
    """The field in parquet-java's schema text, laid out as the node's ``layout`` says."""
    if isinstance(n, Leaf):
        return f"{rep} {_PJ_PRIMITIVE[n.kind.name]} {name}{' (UTF8)' if n.kind.name == 'string' else ''};"
    if isinstance(n, Struct):
        inner = " ".join(_pj_field(f, c, "optional" if nb else "required") for f, c, nb in n.fields)
        return f"{rep} group {name} {{ {inner} }}"
    if isinstance(n, ListN):
        if n.layout == "bare":  # the field itself repeats: no LIST group, never null
            assert rep == "required", name
            return _pj_field(name, n.elem, "repeated")
        if n.layout == "tuple":
            return f"{rep} group {name} (LIST) {{ {_pj_field(name + '_tuple', n.elem, 'repeated')} }}"
        if n.layout == "element":
            return f"{rep} group {name} (LIST) {{ {_pj_field('element', n.elem, 'repeated')} }}"
        if n.layout == "foo_bar":
            inner = _pj_field("bar", n.elem, "optional" if n.elem_nullable else "required")
            return f"{rep} group {name} (LIST) {{ repeated group foo {{ {inner} }} }}"
    if isinstance(n, MapN):
        key = _pj_field("key", n.key, "required")
        value = _pj_field("value", n.value, "optional" if n.value_nullable else "required")
        if n.layout == "hive":
            return f"{rep} group {name} (MAP) {{ repeated group map (MAP_KEY_VALUE) {{ {key} {value} }} }}"
        if n.layout == "kv_outer":
            return f"{rep} group {name} (MAP_KEY_VALUE) {{ repeated group map {{ {key} {value} }} }}"
    raise ValueError(f"no parquet-java layout for {name}: {describe(n)}")


def _pj_emit(g, name: str, n: Node, value) -> None:
    """Adds ``value`` (None: absent) as field ``name`` of the parquet-java Group ``g``."""
    if value is None:
        return
    if isinstance(n, Leaf):
        g.append(name, value)
    elif isinstance(n, Struct):
        sub = g.addGroup(name)
        for f, c, _ in n.fields:
            _pj_emit(sub, f, c, value[f])
    elif isinstance(n, ListN):
        if n.layout == "bare":
            for v in value:
                _pj_emit(g, name, n.elem, v)
            return
        lg = g.addGroup(name)
        for v in value:
            if n.layout == "foo_bar":
                _pj_emit(lg.addGroup("foo"), "bar", n.elem, v)
            else:
                _pj_emit(lg, name + "_tuple" if n.layout == "tuple" else "element", n.elem, v)
    else:
        mg = g.addGroup(name)
        for k, v in value:
            kv = mg.addGroup("map")
            _pj_emit(kv, "key", n.key, k)
            _pj_emit(kv, "value", n.value, v)


def _write_parquet_java(spark, spec: TableSpec, table: pa.Table, path: Path, options: dict) -> None:
    jvm = spark._jvm
    P = jvm.org.apache.parquet
    text = "message legacy { " + " ".join(
        _pj_field(c.name, c.node, "required" if not c.nullable else "optional") for c in spec.columns) + " }"
    schema = P.schema.MessageTypeParser.parseMessageType(text)
    writer = (
        P.hadoop.example.ExampleParquetWriter.builder(jvm.org.apache.hadoop.fs.Path(str(path)))
        .withType(schema)
        # a copy: the example writer stores its schema in the configuration it is given
        .withConf(jvm.org.apache.hadoop.conf.Configuration(spark._jsc.hadoopConfiguration()))
        .withWriterVersion(getattr(P.column.ParquetProperties.WriterVersion, options["writer_version"]))
        .withDictionaryEncoding(options["dictionary"])
        .withCompressionCodec(getattr(P.hadoop.metadata.CompressionCodecName, options["codec"]))
        .withPageRowCountLimit(options["page_row_count_limit"])
        .withPageSize(options["page_size"])
        .withMinRowCountForPageSizeCheck(1)
        .withRowGroupSize(options["row_group_size"])
        .withPageWriteChecksumEnabled(options["checksums"])
        .withBloomFilterEnabled(options["bloom_filters"])
        .withMaxBloomFilterBytes(4096)  # kept in memory until the file closes, per row group
        .build()
    )
    factory = P.example.data.simple.SimpleGroupFactory(schema)
    try:
        for row in table.to_pylist():
            g = factory.newGroup()
            for c in spec.columns:
                _pj_emit(g, c.name, c.node, row[c.name])
            writer.write(g)
    finally:
        writer.close()


#: Spark's other Parquet reader (parquet-java's record reader), also vanilla Spark.
ROW_READER_KEY = "spark.sql.parquet.enableVectorizedReader"
ROW_READER = {ROW_READER_KEY: "false"}


class VanillaReaderNote(UserWarning):
    """Vanilla Spark's vectorized reader failed or disagreed with its row-based reader; the latter
    was the reference."""


def _choose_reference(spark, spec: TableSpec) -> None:
    """Vanilla Spark's vectorized reader fails on some valid files (e.g. an
    ArrayIndexOutOfBoundsException decoding a nested float column whose dictionary overflows to
    plain pages). Such a table is compared with Spark's row-based (parquet-java) reader, which must
    then read it; so is one where the two readers disagree. lmspark still runs with the vectorized
    reader on (it declines scans where that is off)."""
    probe = f"SELECT count(*), sum(hash(to_json(struct(*), {_JSON_OPTS}))) FROM {spec.view}"
    outcomes = {}
    for name, settings in (("vectorized", REFERENCE_CONF), ("row-based", {**REFERENCE_CONF, **ROW_READER})):
        try:
            outcomes[name] = run_query_full(spark, probe, settings).ordered
        except Exception as e:  # noqa: BLE001
            outcomes[name] = e
    vec, row = outcomes["vectorized"], outcomes["row-based"]
    if isinstance(row, Exception):
        # parquet-java's record reader fails on some pyarrow files that the vectorized reader
        # reads (e.g. "Reading past RLE/BitPacking stream"): the vectorized reader is the reference
        if isinstance(vec, Exception):
            raise AssertionError(f"{spec.key}: neither of vanilla Spark's readers reads the table: "
                                 f"{error_summary(vec)}; {error_summary(row)}\n{spec.describe()}")
        return
    if isinstance(vec, Exception):
        note = f"the vectorized reader fails: {error_summary(vec, 200)}"
    elif vec != row:
        note = f"the vectorized reader's rows differ from the row-based reader's (count, hash {vec} vs {row})"
    else:
        return
    spec.reference = {**REFERENCE_CONF, **ROW_READER}
    spec.reference_note = note
    warnings.warn(VanillaReaderNote(f"{spec.key}: reference is Spark's row-based reader: {note}"))


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory) -> dict[str, TableSpec]:
    root = tmp_path_factory.mktemp("nested")
    scratch = tmp_path_factory.mktemp("nested_scratch")
    for spec in SPECS:
        folder = root / spec.key
        folder.mkdir()
        for j, part in enumerate(spec.parts):
            table = gen_part_table(spec, j)
            if part.writer == "pyarrow":
                part.options = _write_pyarrow(table, folder / f"{part.name}.parquet", part.options,
                                              random.Random(part.seed + 1))
            elif part.writer == "parquet-java":
                _write_parquet_java(spark, spec, table, folder / f"{part.name}.parquet", part.options)
            else:
                _write_spark(spark, spec, table, folder, part, scratch)
        spec.folder = folder
        spec.view = f"nested_{spec.key}"
        df = spark.read.parquet(str(folder))
        df.createOrReplaceTempView(spec.view)
        spec.spark_schema = df.schema.simpleString()
        _choose_reference(spark, spec)
    shutil.rmtree(scratch, ignore_errors=True)
    return {s.key: s for s in SPECS}


# --------------------------------------------------------------------------------------------
# Random queries
# --------------------------------------------------------------------------------------------

#: Functions of element predicates: they must stay in Spark's Filter, never in lmspark's pruning.
ELEMENT_FUNCTIONS = ("array_contains", "exists", "forall", "size", "map_contains_key", "get", "try_element_at",
                     "transform", "filter", "cardinality", "map_keys", "map_values")
#: How the element functions a WHERE clause uses show in a plan's Filter (rewrites included).
_IN_FILTER = {"array_contains": "array_contains", "map_contains_key": "array_contains", "exists": "exists",
              "forall": "forall", "size": "size", "cardinality": "cardinality"}


def stays_in_spark(where: str) -> tuple[str, ...]:
    """The element functions of a WHERE clause, as its Filter in the plan names them."""
    found = re.findall(r"\b(" + "|".join(_IN_FILTER) + r")\(", where)
    return tuple(sorted({_IN_FILTER[f] for f in found}))


@dataclasses.dataclass
class Case:
    table: str
    number: int
    sql: str
    ordered: bool
    in_filter: tuple[str, ...]  # element functions of the WHERE clause: Spark's Filter must evaluate them

    @property
    def key(self) -> str:
        return f"{self.table}:{self.number}"


def _q(name: str) -> str:
    return f"`{name}`"


class CaseGen:
    def __init__(self, spec: TableSpec, rng: random.Random):
        self.spec, self.rng = spec, rng
        self.lambdas = itertools.count()
        # non-repeated paths (through structs only): to leaves, to structs, to lists and maps
        self.leaf_paths: list[tuple[str, Leaf]] = []
        self.struct_paths: list[tuple[str, Struct]] = []
        self.coll_paths: list[tuple[str, Node]] = []
        for c in spec.columns:
            self._paths(_q(c.name), c.node)

    def _paths(self, sql: str, n: Node) -> None:
        if isinstance(n, Leaf):
            self.leaf_paths.append((sql, n))
        elif isinstance(n, Struct):
            self.struct_paths.append((sql, n))
            for name, c, _ in n.fields:
                self._paths(f"{sql}.{_q(name)}", c)
        else:
            self.coll_paths.append((sql, n))

    def _var(self) -> str:
        return f"x{next(self.lambdas)}"

    def _sample(self, n: Node):
        return self.rng.choice(n.samples) if n.samples else None

    def _key_literal(self, m: MapN) -> str:
        k = self.rng.choice(m.key_samples) if m.key_samples and self.rng.random() < 0.85 else m.key.kind.fresh(self.rng)
        return m.key.kind.literal(k)

    # ---- projections -----------------------------------------------------------------------

    def proj(self, n: Node, base: str, budget: int = 3) -> str:
        """An expression reading (part of) a value of type ``n`` at ``base``."""
        r = self.rng.random()
        if isinstance(n, Leaf) or budget == 0:
            return base
        if isinstance(n, Struct):
            if r < 0.25:
                return base
            name, c, _ = self.rng.choice(n.fields)
            return self.proj(c, f"{base}.{_q(name)}", budget)
        if isinstance(n, ListN):
            if r < 0.2:
                return base
            if r < 0.3:
                return f"size({base})"
            if r < 0.5:
                return self.proj(n.elem, f"get({base}, {self.rng.choice([0, 0, 1, 3])})", budget - 1)
            if r < 0.65 and isinstance(n.elem, Struct):
                name, c, _ = self.rng.choice(n.elem.fields)
                return f"{base}.{_q(name)}"  # GetArrayStructFields: a pruned list of structs
            if r < 0.9:
                x = self._var()
                return f"transform({base}, {x} -> {self.proj(n.elem, x, budget - 1)})"
            x = self._var()
            return f"filter({base}, {x} -> {x} IS NOT NULL)"
        # map
        if r < 0.2:
            return base
        if r < 0.3:
            return f"map_keys({base})"
        if r < 0.45:
            x = self._var()
            return f"transform(map_values({base}), {x} -> {self.proj(n.value, x, budget - 1)})"
        if r < 0.7:
            return self.proj(n.value, f"{base}[{self._key_literal(n)}]", budget - 1)
        if r < 0.85:
            k, v = self._var(), self._var()
            return f"transform_values({base}, ({k}, {v}) -> {self.proj(n.value, v, budget - 1)})"
        if r < 0.93:
            return f"map_entries({base})"
        return f"cardinality({base})"

    def projection(self) -> list[str]:
        r = self.rng
        cols = self.spec.columns
        nested = [c for c in cols if c.name.startswith("n")]
        out = []
        if r.random() < 0.4:
            out.append("`id`")
        for c in r.sample(nested, r.randint(1, min(3, len(nested)))):
            out.append(self.proj(c.node, _q(c.name)))
        if r.random() < 0.2:
            out.append(r.choice(["`f_int`", "`f_str`"]))
        return out

    # ---- predicates ------------------------------------------------------------------------

    def leaf_pred(self, path: str, n: Leaf) -> str:
        r, k = self.rng, n.kind
        v = self._sample(n)
        if v is None or r.random() < 0.12:
            return f"{path} IS {r.choice(['', 'NOT '])}NULL"
        lit = k.literal(v)
        if k.name == "bool":
            return r.choice([path, f"NOT {path}", f"{path} = {lit}", f"{path} <=> {lit}"])
        x = r.random()
        if x < 0.35:
            return f"{path} {r.choice(['=', '<', '<=', '>', '>=', '!='])} {lit}"
        if x < 0.5:
            w = self._sample(n)
            lo, hi = sorted([v, w], key=lambda z: (z != z, z)) if isinstance(v, float) else sorted([v, w])
            return f"{path} BETWEEN {k.literal(lo)} AND {k.literal(hi)}"
        if x < 0.62:
            items = [k.literal(self._sample(n)) for _ in range(r.randint(1, 4))] + (["NULL"] if r.random() < 0.2 else [])
            return f"{path} {'NOT IN' if r.random() < 0.2 else 'IN'} ({', '.join(items)})"
        if x < 0.7:
            return f"{path} <=> {lit}"
        if x < 0.8 and k.name == "string":
            s = "".join(ch for ch in v if ch not in "%_\\")[:2]
            return f"{path} LIKE {_quote(s + '%')}"
        if x < 0.88:
            return f"({path} IS NULL OR {path} {r.choice(['>', '<'])} {lit})"
        return f"{path} = {lit}"

    def flat_pred(self) -> str:
        r = self.rng
        x = r.random()
        if x < 0.3:
            return self.leaf_pred("`f_int`", self.spec.columns[1].node)
        if x < 0.5:
            return self.leaf_pred("`f_str`", self.spec.columns[2].node)
        if x < 0.75:
            lo = r.choice([0, 1_000_000, 2_000_000]) + r.randint(0, 200)
            return f"`id` BETWEEN {lo} AND {lo + r.randint(0, 150)}"
        return f"`id` % {r.randint(2, 9)} = {r.randint(0, 1)}"

    def struct_pred(self) -> str | None:
        """On a non-repeated struct field (a path through structs only) or a whole struct."""
        r = self.rng
        nested_leaves = [(p, n) for p, n in self.leaf_paths if "." in p]
        if nested_leaves and r.random() < 0.8:
            return self.leaf_pred(*r.choice(nested_leaves))
        if self.struct_paths:
            p, _ = r.choice(self.struct_paths)
            return f"{p} IS {r.choice(['', 'NOT '])}NULL"
        return None

    def element_pred(self, path: str, n: Node) -> str:
        r = self.rng
        if isinstance(n, ListN):
            e = n.elem
            x = r.random()
            if x < 0.25 and isinstance(e, Leaf) and e.samples and e.kind.name not in ("float", "double"):
                return f"array_contains({path}, {e.kind.literal(self._sample(e))})"
            v = self._var()
            if x < 0.55:
                body = self._elem_body(e, v)
                return f"{r.choice(['exists', 'exists', 'forall'])}({path}, {v} -> {body})"
            if x < 0.7:
                return f"size({path}) {r.choice(['>', '=', '<'])} {r.randint(0, 3)}"
            if x < 0.85 and isinstance(e, Leaf) and e.samples:
                return f"get({path}, 0) {r.choice(['=', '>', '<'])} {e.kind.literal(self._sample(e))}"
            return f"{path} IS {r.choice(['', 'NOT '])}NULL"
        x = r.random()
        if x < 0.3:
            return f"map_contains_key({path}, {self._key_literal(n)})"
        if x < 0.55 and isinstance(n.value, Leaf) and n.value.samples:
            return f"{path}[{self._key_literal(n)}] {r.choice(['=', '>=', '<'])} {n.value.kind.literal(self._sample(n.value))}"
        if x < 0.7:
            return f"{path}[{self._key_literal(n)}] IS {r.choice(['', 'NOT '])}NULL"
        if x < 0.85:
            v = self._var()
            return f"exists(map_values({path}), {v} -> {self._elem_body(n.value, v)})"
        return f"cardinality({path}) {r.choice(['>', '='])} {r.randint(0, 2)}"

    def _elem_body(self, e: Node, v: str) -> str:
        if isinstance(e, Leaf) and e.samples:
            return self.leaf_pred(v, e)
        if isinstance(e, Struct):
            for name, c, _ in self.rng.sample(e.fields, len(e.fields)):
                if isinstance(c, Leaf) and c.samples:
                    return self.leaf_pred(f"{v}.{_q(name)}", c)
        return f"{v} IS NULL"

    def pred(self, depth_: int = 2) -> tuple[str, bool]:
        """(predicate, uses an element function)."""
        r = self.rng
        if depth_ == 0 or r.random() < 0.45:
            x = r.random()
            if x < 0.35:
                return self.flat_pred(), False
            if x < 0.75:
                p = self.struct_pred()
                if p:
                    return p, False
            if self.coll_paths:
                return self.element_pred(*r.choice(self.coll_paths)), True
            return self.flat_pred(), False
        a, ea = self.pred(depth_ - 1)
        if r.random() < 0.15:
            return f"NOT ({a})", ea
        b, eb = self.pred(depth_ - 1)
        return f"({a} {r.choice(['AND', 'AND', 'OR'])} {b})", ea or eb

    # ---- whole queries ---------------------------------------------------------------------

    def case(self, number: int) -> Case:
        r = self.rng
        view = self.spec.view
        where = ""
        if r.random() < 0.85:
            p, _ = self.pred(r.choice([0, 1, 1, 2]))
            where = f" WHERE {p}"
        kind = r.random()
        ordered = False
        if kind < 0.08:
            sql = f"SELECT * FROM {view}{where}"
        elif kind < 0.18:
            sql = self._aggregate(view, where)
        elif kind < 0.3 and self.coll_paths:
            sql = self._explode(view, where)
        elif kind < 0.4:
            keys = [p for p, n in self.leaf_paths if n.kind.name != "binary"]
            key = r.choice(keys)
            cols = ", ".join(f"{e} AS p{i}" for i, e in enumerate(self.projection()))
            sql = (f"SELECT {cols} FROM {view}{where} ORDER BY {key} {r.choice(['ASC', 'DESC'])} NULLS FIRST, `id`"
                   f" LIMIT {r.choice([1, 5, 30])}")
            ordered = True
        else:
            cols = ", ".join(f"{e} AS p{i}" for i, e in enumerate(self.projection()))
            sql = f"SELECT {cols} FROM {view}{where}"
        return Case(self.spec.key, number, sql, ordered, stays_in_spark(where))

    def _aggregate(self, view: str, where: str) -> str:
        r = self.rng
        aggs = ["count(*)"]
        nested_leaves = [(p, n) for p, n in self.leaf_paths if "." in p]
        if nested_leaves:
            p, n = r.choice(nested_leaves)
            aggs.append(f"count({p})")
            if n.kind.name not in ("bool",):
                aggs.append(f"{r.choice(['min', 'max'])}({p})")
            aggs.append(f"count(DISTINCT {p})")
        lists = [(p, n) for p, n in self.coll_paths]
        if lists:
            p, _ = r.choice(lists)
            aggs.append(f"sum(size({p}))")
            aggs.append(f"count({p})")
        cols = ", ".join(f"{a} AS p{i}" for i, a in enumerate(r.sample(aggs, r.randint(1, len(aggs)))))
        if r.random() < 0.4:
            return f"SELECT `f_int` AS g, {cols} FROM {view}{where} GROUP BY `f_int`"
        return f"SELECT {cols} FROM {view}{where}"

    def _explode(self, view: str, where: str) -> str:
        r = self.rng
        path, n = r.choice(self.coll_paths)
        outer = "OUTER " if r.random() < 0.4 else ""
        pos = r.random() < 0.3
        fn = "posexplode" if pos else "explode"
        if isinstance(n, ListN):
            names = (["pos"] if pos else []) + ["e"]
            sel = ["`id` AS p0"] + (["pos AS p1"] if pos else [])
            sel.append(f"{self.proj(n.elem, 'e', 2)} AS p{len(sel)}")
        else:
            names = (["pos"] if pos else []) + ["k", "v"]
            sel = ["`id` AS p0"] + (["pos AS p1"] if pos else [])
            sel.append(f"k AS p{len(sel)}")
            sel.append(f"{self.proj(n.value, 'v', 2)} AS p{len(sel)}")
        return (f"SELECT {', '.join(sel)} FROM {view} LATERAL VIEW {outer}{fn}({path}) tv AS {', '.join(names)}"
                f"{where}")


def cases_for(spec: TableSpec) -> list[Case]:
    gen = CaseGen(spec, random.Random(SEED * 1_000_003 + spec.index))
    return [gen.case(i) for i in range(CASES_PER_TABLE)]


# --------------------------------------------------------------------------------------------
# Flag plan
# --------------------------------------------------------------------------------------------

#: flag -> values; the first is the default.
FLAG_SPACE: dict[str, list[str]] = {
    C.LATE_MATERIALIZATION_ENABLED: ["true", "false"],
    C.PAGE_INDEX_ENABLED: ["true", "false"],
    C.OUTPUT: ["auto", "columnar", "row"],
    C.BATCH_SIZE: ["4096", "37", "1"],
    C.SELECTION_POLICY: ["auto", "selectors", "mask"],
    C.SELECTION_THRESHOLD: ["11", "0", "1000"],
    C.PRUNING_STATISTICS_ENABLED: ["true", "false"],
    C.PRUNING_DICTIONARY_ENABLED: ["true", "false"],
    C.PRUNING_BLOOM_FILTER_ENABLED: ["true", "false"],
    C.PRUNING_GUARANTEES_ENABLED: ["true", "false"],
    C.PRUNING_SPLITS_ENABLED: ["true", "false"],
    C.DICTIONARY_PREDICATES_ENABLED: ["true", "false"],
    C.DICTIONARY_PRESERVE_ENABLED: ["true", "false"],
    C.PREDICATE_CACHE_MAX_BYTES: ["67108864", "0", "200"],
    C.LATE_MATERIALIZATION_DENSE_FRACTION: ["0.5", "0", "1"],
    C.LATE_MATERIALIZATION_SCATTERED_FRACTION: ["0.25", "1"],
    C.LATE_MATERIALIZATION_EXPLORE_EVERY: ["8", "0", "1"],
    C.METADATA_CACHE_MAX_BYTES: ["134217728", "0"],
    C.IO_VECTORED_ENABLED: ["true", "false"],
    C.IO_MAX_COALESCE_GAP: ["1048576", "0"],
    C.IO_SINGLE_STAGE_MAX_BYTES: ["8388608", "0"],
    C.VERIFY_CHECKSUMS: ["false", "true"],
}
#: Every combination of these runs at least once.
CORE_FLAGS = [C.LATE_MATERIALIZATION_ENABLED, C.PAGE_INDEX_ENABLED, C.OUTPUT, C.BATCH_SIZE, C.SELECTION_POLICY]


def _pairs(combo: dict[str, str]) -> set:
    items = sorted(combo.items())
    return {(a, b) for i, a in enumerate(items) for b in items[i + 1:]}


def plan_flags(n_runs: int, seed: int) -> list[dict[str, str]]:
    """``n_runs`` flag combinations: the core product in a seeded order (repeated as needed), the
    other flags chosen greedily (among random candidates) to cover every pair of values."""
    rng = random.Random(seed)
    core = [dict(zip(CORE_FLAGS, vals)) for vals in itertools.product(*(FLAG_SPACE[f] for f in CORE_FLAGS))]
    rng.shuffle(core)
    others = [f for f in FLAG_SPACE if f not in CORE_FLAGS]
    uncovered = set()
    flags = list(FLAG_SPACE)
    for i, f in enumerate(flags):
        for g in flags[i + 1:]:
            for a in FLAG_SPACE[f]:
                for b in FLAG_SPACE[g]:
                    uncovered |= _pairs({f: a, g: b})
    out = []
    for k in range(n_runs):
        best, best_gain = None, -1
        for _ in range(24):
            cand = {**core[k % len(core)], **{f: rng.choice(FLAG_SPACE[f]) for f in others}}
            gain = len(_pairs(cand) & uncovered)
            if gain > best_gain:
                best, best_gain = cand, gain
        uncovered -= _pairs(best)
        out.append(best)
    return out


FLAG_PLAN = plan_flags(N_TABLES * BATCHES_PER_TABLE * COMBOS_PER_BATCH, SEED)


def flags_for(table_index: int, batch: int) -> list[dict[str, str]]:
    start = (table_index * BATCHES_PER_TABLE + batch) * COMBOS_PER_BATCH
    return FLAG_PLAN[start:start + COMBOS_PER_BATCH]


def _short_flags(flags: dict[str, str]) -> dict[str, str]:
    """Only the flags that differ from their default, without the common prefix."""
    return {k.replace("spark.lmspark.", ""): v for k, v in flags.items() if v != FLAG_SPACE[k][0]}


# --------------------------------------------------------------------------------------------
# Running cases
# --------------------------------------------------------------------------------------------

#: Dates and timestamps as exact text (any year), binary as base64, NaN and -0.0 kept.
_JSON_OPTS = ("map('timestampFormat', 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSSXXX', "
              "'timestampNTZFormat', 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSS', 'dateFormat', 'yyyy-MM-dd', "
              "'ignoreNullFields', 'false')")


def union_sql(cases: list[Case]) -> str:
    return "\nUNION ALL\n".join(
        f"SELECT {i} AS k, to_json(struct(*), {_JSON_OPTS}) AS v FROM ({c.sql})" for i, c in enumerate(cases)
    )


def _per_case(run, n: int) -> list[Counter]:
    out = [Counter() for _ in range(n)]
    for k, v in run.ordered:
        out[k][v] += 1
    return out


#: Where an executed AQE plan's string starts its top-level initial plan (after the final one).
_TOP_INITIAL_PLAN = re.compile(r"^\+- == Initial Plan ==\s*$", re.M)


def _never_run(ref_plan: str) -> bool:
    """The reference's plan is an AQE plan that never ran (the in-memory reference's)."""
    return ref_plan.startswith("AdaptiveSparkPlan isFinalPlan=false")


def _comparable(plan: str, ref_plan: str) -> str:
    """The part of lmspark's executed ``plan`` whose scans compare with ``ref_plan``'s: all of it,
    but its top-level initial plan alone when the reference's plan never ran. Under AQE a plan that
    never ran prints once, where a run prints its final plan and its initial one."""
    return _TOP_INITIAL_PLAN.split(plan, maxsplit=1)[-1] if _never_run(ref_plan) else plan


_PRUNING_RE = re.compile(r"LmPruningPredicate: (.*?)(?:, Lm\w+:|, Location:|$)", re.M)
_ELEMENT_RE = re.compile(r"\b(" + "|".join(ELEMENT_FUNCTIONS) + r")\(")


def lm_problems(run, ref_plan: str, in_filter: tuple[str, ...], where: str) -> list[str]:
    """What is wrong with how lmspark served a run (empty: nothing)."""
    problems = []
    n_scans = ref_plan.count(SPARK_NODE)
    plan = run.plan
    scans = _comparable(plan, ref_plan)
    if n_scans == 0:
        return problems  # the optimizer removed the scans
    if _require_lm():
        try:
            if run.metrics["scans"] == 0 and LM_NODE in plan:
                # AQE dropped the scans from the final plan (an aggregate over an empty result
                # becomes an empty relation), so they have no metrics: the plan must do
                assert not fallback_reasons(plan), f"unexpected fallback in:\n{plan}"
            else:
                assert_lm_read_everything(run)
            if _never_run(ref_plan):
                assert SPARK_NODE not in plan, f"Spark's scan in lmspark's plan:\n{plan}"
            lm_count = scans.count(LM_NODE)
            assert lm_count == n_scans, (
                f"{lm_count} LmParquetScan for the reference's {n_scans} scans:\n{plan}")
        except AssertionError as e:
            reasons = sorted(set(fallback_reasons(plan)))
            problems.append(f"{where}\n  lmspark did not read everything itself ({lm_status(plan)}; "
                            f"reasons {reasons[:4]}; metrics {run.metrics}):\n  {str(e)[:600]}")
    else:
        if scans.count(LM_NODE) + len(fallback_reasons(scans)) != n_scans:
            problems.append(f"{where}\n  a scan neither served by lmspark nor declined with a reason:\n{plan}")
    for m in _PRUNING_RE.finditer(plan):
        bad = _ELEMENT_RE.search(m.group(1))
        if bad:
            problems.append(f"{where}\n  element function {bad.group(1)} in lmspark's pruning predicate "
                            f"(must stay in Spark's Filter): {m.group(1)[:500]}")
    if LM_NODE in plan:
        lines = plan.splitlines()
        filters = "\n".join(line for line in lines if re.match(r"^[^A-Za-z]*Filter ", line))
        lm_scans = "\n".join(line for line in lines if LM_NODE in line)
        for fn in in_filter:
            # an lmspark scan has the predicate among its data filters, yet no Filter above it
            # evaluates it (a subtree AQE replaced by an empty relation has neither)
            if f"{fn}(" in lm_scans and f"{fn}(" not in filters:
                problems.append(f"{where}\n  the element predicate {fn}(...) is no longer evaluated by Spark's "
                                f"Filter; the plan's filters:\n{filters[:3000]}")
    return problems


def lm_settings(flags: dict) -> dict:
    return {**LM_CONF, "spark.sql.parquet.enableVectorizedReader": "true", **flags}


def _where(spec: TableSpec, case: Case, flags: dict | None) -> str:
    flag_text = f"flags {_short_flags(flags)}" if flags is not None else "reference run"
    return (f"[LMSPARK_TEST_SEED={SEED} {CASE_ENV}={case.key}] {flag_text}\n  SQL: {case.sql}")


def _plan_only(spark, sql: str, flags: dict) -> str:
    """The lmspark run's physical plan, without running the query."""
    with conf(spark, lm_settings(flags)):
        return executed_plan(spark.sql(sql))


def _reference_in_memory(spark, spec: TableSpec, sql: str):
    """``sql`` over vanilla Spark's read of the whole table, held in memory: the reference for a
    query both of vanilla's readers fail on although its reference reader reads the whole table
    (the pruned read of some files is what fails, a Spark bug). Its plan is that of the query over
    the files, so the checks of how lmspark served the scans still apply. Raises if that fails too."""
    with conf(spark, spec.reference):
        whole = spark.table(spec.view).localCheckpoint(eager=True)
        file_plan = executed_plan(spark.sql(sql))
    whole.createOrReplaceTempView(spec.view)
    try:
        return dataclasses.replace(run_query_full(spark, sql, spec.reference), plan=file_plan)
    finally:
        spark.read.parquet(str(spec.folder)).createOrReplaceTempView(spec.view)


def _vanilla_cannot_run(spark, spec: TableSpec, case: Case, combos: list[dict], ref_error: Exception) -> list[str]:
    """A case vanilla Spark cannot run at all: lmspark must fail too, and the case is a generator bug."""
    failures = []
    for flags in combos:
        try:
            run_query_full(spark, case.sql, lm_settings(flags))
            failures.append(f"{_where(spec, case, flags)}\n  vanilla fails ({error_summary(ref_error)}), "
                            f"lmspark answers")
        except Exception:  # noqa: BLE001
            pass
    failures.append(f"{_where(spec, case, None)}\n  the generated query fails on vanilla Spark: "
                    f"{error_summary(ref_error)}")
    return failures


def run_alone(spark, spec: TableSpec, case: Case, combos: list[dict]) -> list[str]:
    """One case on its own (no UNION): reference, then lmspark under each combination."""
    failures = []
    vectorized_fails = ""
    try:
        try:
            ref = run_query_full(spark, case.sql, spec.reference)
        except Exception as vec_error:  # noqa: BLE001
            if spec.reference.get(ROW_READER_KEY) == "false":
                raise
            # the vectorized reader fails on this query (and not on the whole table): the
            # row-based reader is this case's reference
            ref = run_query_full(spark, case.sql, {**spec.reference, **ROW_READER})
            vectorized_fails = error_summary(vec_error)
            warnings.warn(VanillaReaderNote(
                f"{case.key}: vanilla's vectorized reader fails ({error_summary(vec_error, 200)}), reference is "
                f"its row-based reader; SQL: {case.sql}"))
    except Exception as ref_error:  # noqa: BLE001
        try:
            ref = _reference_in_memory(spark, spec, case.sql)
            warnings.warn(VanillaReaderNote(
                f"{case.key}: both of vanilla's readers fail on this query ({error_summary(ref_error, 200)}), "
                f"reference is the query over vanilla's read of the whole table, held in memory; SQL: {case.sql}"))
        except Exception:  # noqa: BLE001 - vanilla cannot run it: lmspark must fail too
            return _vanilla_cannot_run(spark, spec, case, combos, ref_error)
    for flags in combos:
        where = _where(spec, case, flags)
        try:
            with capture_lm_log(spark) as log:
                run = run_query_full(spark, case.sql, lm_settings(flags))
                run.metrics  # noqa: B018 - read inside the block
        except Exception as e:  # noqa: BLE001 - a failed query is a finding, reported with its case
            handed = sorted(set(log.file_fallbacks().values()))
            if handed:
                where += f"\n  lmspark handed files to Spark's reader: {handed[:3]}"
            if vectorized_fails and not _require_lm() and (
                    error_summary(e) == vectorized_fails or LM_NODE not in _plan_only(spark, case.sql, flags)):
                continue  # lmspark left the scan or the file to Spark's reader, which fails as above
            failures.append(f"{where}\n  lmspark fails where vanilla answers "
                            f"({lm_status(_plan_only(spark, case.sql, flags))}): {error_summary(e, 600)}")
            continue
        got, want = (run.ordered, ref.ordered) if case.ordered else (run.rows, ref.rows)
        if run.columns != ref.columns or got != want:
            failures.append(f"{where}\n  columns {run.columns} vs {ref.columns}; "
                            + ("rows in another order; " if case.ordered and run.rows == ref.rows else "")
                            + describe_difference(run.rows, ref.rows))
            continue
        problems = lm_problems(run, ref.plan, case.in_filter, where)
        handed = sorted(set(log.file_fallbacks().values()))
        failures += [f"{p}\n  lmspark handed files to Spark's reader: {handed[:3]}" if handed else p for p in problems]
    return failures


def run_batch(spark, spec: TableSpec, cases: list[Case], combos: list[dict], diagnose: list[int]) -> list[str]:
    """The unordered cases as one UNION ALL query (the reference once, lmspark per combination),
    the ordered ones alone. A batch whose union fails runs case by case. Where lmspark did not
    read everything itself, a few of the batch's cases run alone to name them (while
    ``diagnose[0]``, decremented, is positive)."""
    failures = []
    unordered = [c for c in cases if not c.ordered]
    for c in cases:
        if c.ordered:
            failures += run_alone(spark, spec, c, combos)
    if not unordered:
        return failures
    sql = union_sql(unordered)
    try:
        ref = run_query_full(spark, sql, spec.reference)
    except Exception:  # noqa: BLE001 - find the case(s) that fail, run the rest alone
        for c in unordered:
            failures += run_alone(spark, spec, c, combos)
        return failures
    expected = _per_case(ref, len(unordered))
    in_filter = tuple(sorted({f for c in unordered for f in c.in_filter}))
    for flags in combos:
        try:
            run = run_query_full(spark, sql, lm_settings(flags))
        except Exception:  # noqa: BLE001 - name the failing case(s)
            for c in unordered:
                failures += run_alone(spark, spec, c, [flags])
            continue
        got = _per_case(run, len(unordered))
        for c, g, e in zip(unordered, got, expected):
            if g != e:
                failures.append(f"{_where(spec, c, flags)}\n  (in a batch) {describe_difference(g, e)}")
        problems = lm_problems(run, ref.plan, in_filter, f"[batch of {[c.key for c in unordered]}] flags "
                                                      f"{_short_flags(flags)}")
        if problems:
            named = []
            if diagnose[0] > 0:  # which cases: alone, under these flags (a few, to keep a failing run short)
                diagnose[0] -= 1
                for c in unordered[:4]:
                    named += run_alone(spark, spec, c, [flags])
            failures += problems + named
    return failures


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


def _only_case() -> tuple[str, int] | None:
    value = os.environ.get(CASE_ENV, "").strip()
    if not value:
        return None
    table, _, number = value.partition(":")
    return table, int(number)


@pytest.mark.parametrize("index", range(N_TABLES), ids=[s.key for s in SPECS])
def test_nested_differential(spark, tables, index):
    spec = tables[SPECS[index].key]
    cases = cases_for(spec)
    only = _only_case()
    failures = []
    if only is not None:
        if only[0] != spec.key:
            pytest.skip(f"{CASE_ENV}={only[0]}:{only[1]}")
        case = cases[only[1]]
        combos = flags_for(index, only[1] // BATCH)
        print(f"{spec.describe()}\n{case.sql}\nflags: {[_short_flags(f) for f in combos]}")
        failures = run_alone(spark, spec, case, combos)
    else:
        diagnose = [2]
        for b in range(BATCHES_PER_TABLE):
            failures += run_batch(spark, spec, cases[b * BATCH:(b + 1) * BATCH], flags_for(index, b), diagnose)
    assert not failures, (
        f"{len(failures)} failures (LMSPARK_TEST_SEED={SEED}; rerun one with {CASE_ENV}=<table>:<case>)\n"
        f"{spec.describe()}\n" + "\n".join(failures[:8])
    )


def test_flag_plan_covers_every_pair():
    """Every combination of the core flags runs, and every pair of values of any two flags."""
    core = {tuple(f[k] for k in CORE_FLAGS) for f in FLAG_PLAN}
    assert len(core) == len(list(itertools.product(*(FLAG_SPACE[f] for f in CORE_FLAGS)))), len(core)
    seen = set().union(*(_pairs(f) for f in FLAG_PLAN))
    flags = list(FLAG_SPACE)
    missing = [((f, a), (g, b)) for i, f in enumerate(flags) for g in flags[i + 1:]
               for a in FLAG_SPACE[f] for b in FLAG_SPACE[g] if not _pairs({f: a, g: b}) <= seen]
    assert not missing, f"{len(missing)} pairs of flag values never run, e.g. {missing[:5]}"


def _footers(spark, folder: Path) -> list[tuple[str, int, bool]]:
    """(schema as parquet-java prints it, row groups, has an offset index) per file, read by
    parquet-java (pyarrow refuses some of Spark's legacy layouts: "LIST-annotated groups must not
    be repeated")."""
    jvm = spark._jvm
    hconf = spark._jsc.hadoopConfiguration()
    out = []
    for f in sorted(folder.glob("*.parquet")):
        reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(
            jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(jvm.org.apache.hadoop.fs.Path(str(f)), hconf))
        try:
            footer = reader.getFooter()
            blocks = footer.getBlocks()
            has_oi = any(c.getOffsetIndexReference() is not None
                         for b in range(blocks.size()) for c in blocks.get(b).getColumns())
            out.append((str(footer.getFileMetaData().getSchema().toString()), blocks.size(), has_oi))
        finally:
            reader.close()
    return out


def test_layouts_written(spark, tables):
    """The files hold the layouts this suite claims to cover (checked on their footers)."""
    footers = [f for spec in tables.values() for f in _footers(spark, spec.folder)]
    text = "\n".join(schema for schema, _, _ in footers)
    prim = r"(?:int32|int64|binary|boolean|float|double|int96|fixed_len_byte_array\(\d+\))"
    checks = {
        "3-level list, element": re.search(r"repeated group list \{\s*(?:required|optional) [^;{]*\belement\b", text),
        "3-level list, item (use_compliant_nested_type=False)":
            re.search(r"repeated group list \{\s*(?:required|optional) [^;{]*\bitem\b", text),
        "legacy 3-level list, bag / array": re.search(r"repeated group bag \{\s*optional [^;{]*\barray\b", text),
        "2-level list of primitives": re.search(rf"repeated {prim} array;", text),
        "2-level list of one-field structs": re.search(r"repeated group array \{\s*[^{};]*;\s*\}", text),
        "2-level list of lists": re.search(r"repeated group array \(LIST\)", text),
        "map, key_value": "repeated group key_value" in text,
        "INT96 nested timestamps": "int96" in text,
        "decimal as int32": re.search(r"int32 \w+ \(DECIMAL", text),
        "decimal as fixed": re.search(r"fixed_len_byte_array\(\d+\) \w+ \(DECIMAL", text),
        "depth 4": any(depth(c.node) == 4 for spec in tables.values() for c in spec.columns),
        "required nested groups": "required group" in text,
        "page index": any(has_oi for _, _, has_oi in footers),
        "no page index": any(not has_oi for _, _, has_oi in footers),
        "many row groups": any(n >= 10 for _, n, _ in footers),
        "long lists (200+ elements)": LONGEST[0] >= 200,
        "bare repeated primitive (no LIST)": re.search(r"^\s*repeated int32 n_rint;", text, re.M),
        "bare repeated group (no LIST)": re.search(r"^\s*repeated group n_rs \{", text, re.M),
        "thrift <name>_tuple element group": re.search(r"repeated group \w+_tuple \{", text),
        "2-level list, repeated group element": re.search(r"repeated group element \{", text),
        "3-level list, other names": re.search(r"repeated group foo \{", text),
        "Hive map, MAP_KEY_VALUE": re.search(r"repeated group map \(MAP_KEY_VALUE\)", text),
        "map, MAP_KEY_VALUE on the outer group": re.search(r"group n_k \(MAP_KEY_VALUE\)", text),
    }
    missing = [name for name, ok in checks.items() if not ok]
    assert not missing, f"layouts not produced with LMSPARK_TEST_SEED={SEED}: {missing}"
    writers = Counter(p.writer for spec in tables.values() for p in spec.parts)
    options = [p.options for spec in tables.values() for p in spec.parts if p.writer == "pyarrow"]
    for key, want in [("data_page_version", "2.0"), ("data_page_version", "1.0"), ("write_page_index", True),
                      ("write_page_index", False), ("use_dictionary", False), ("max_rows_per_page", 1),
                      ("use_compliant_nested_type", False), ("data_page_size", 1)]:
        assert any(o.get(key) == want for o in options), f"no pyarrow file with {key}={want}"
    assert any("column_encoding" in o for o in options) and any("bloom_filter_options" in o for o in options)
    spark_opts = [p.options for spec in tables.values() for p in spec.parts if p.writer == "spark"]
    assert any(o.get("parquet.page.row.count.limit") == "1" for o in spark_opts), "no Spark file with one row per page"
    assert writers["spark"] >= 6 and writers["pyarrow"] >= 20 and writers["parquet-java"] >= 2, writers
