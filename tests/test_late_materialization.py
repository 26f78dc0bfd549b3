"""Late materialization, differentially, through real PySpark sessions (``lmspark.enable_lm``).

About 100 seeded cases over pyarrow-written files (dictionary on / off / falling back, several row group
and page sizes, page indexes on and off, page v1 and v2, clustered and random): a random filter over 1-3
columns (comparisons, ``<=>``, IN with and without NULL, IS [NOT] NULL, LIKE / startswith, AND / OR / NOT,
point and always-true predicates, and expressions lmspark cannot translate) and a random projection
(all columns, a subset, only unfiltered columns, ``count(*)``). Each case runs with lmspark under three of
the pipeline's flag combinations and must give exactly vanilla Spark's rows with lmspark and filter pushdown
off; lmspark must have read every file itself. The JVM suite ``LateMaterializationDifferentialSuite`` is
the large version of this test.

``LMSPARK_TEST_SEED`` changes the data and the cases; a failure prints the seed, the case, the file, the
SQL and the flags.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random
from pathlib import Path

import pyarrow as pa
import pytest

import datagen
from conftest import (
    LM_CONF,
    REFERENCE_CONF,
    SPARK_NODE,
    assert_lm_read_everything,
    describe_difference,
    run_query,
    run_query_full,
)
from lmspark import conf as C

SEED = int(os.environ.get("LMSPARK_TEST_SEED", "20261122"))
ROWS = 2503  # not a multiple of either batch size used below
CASES_PER_FILE = 20

COLUMNS: dict[str, pa.DataType] = {
    "c_bool": pa.bool_(),
    "c_int": pa.int32(),
    "c_long": pa.int64(),
    "c_int8": pa.int8(),
    "c_int16": pa.int16(),
    "c_float": pa.float32(),
    "c_double": pa.float64(),
    "c_date": pa.date32(),
    "c_ts_us": pa.timestamp("us", tz="UTC"),
    "c_ntz_ms": pa.timestamp("ms"),
    "c_string": pa.string(),
    "c_binary": pa.binary(),
    "c_dec_9_2": pa.decimal128(9, 2),
    "c_dec_18_4": pa.decimal128(18, 4),
    "c_dec_30_5": pa.decimal128(30, 5),
}

#: name -> (nulls, sort column, pyarrow writer options)
FILES: dict[str, tuple[str, str | None, dict]] = {
    "dict_small_pages_v1": ("some", None, dict(row_group_size=700, data_page_size=256, use_dictionary=True,
                                                write_page_index=True, data_page_version="1.0")),
    "plain_v2_zstd_sorted": ("some", "c_int", dict(row_group_size=1100, data_page_size=512, use_dictionary=False,
                                                   write_page_index=True, data_page_version="2.0",
                                                   compression="zstd")),
    "dict_fallback_sorted": ("none", "c_string", dict(row_group_size=900, data_page_size=1024, use_dictionary=True,
                                                      dictionary_pagesize_limit=256, write_page_index=True)),
    "some_dict_no_page_index": ("some", "c_date", dict(row_group_size=500, data_page_size=512,
                                                       use_dictionary=["c_string", "c_int", "c_double"],
                                                       write_page_index=False, compression="gzip")),
    "one_row_group_all_null_column": ("some", None, dict(row_group_size=100_000, data_page_size=2048,
                                                         use_dictionary=True, write_page_index=True,
                                                         data_page_version="2.0")),
}

LM, DP, CACHE = C.LATE_MATERIALIZATION_ENABLED, C.DICTIONARY_PREDICATES_ENABLED, C.PREDICATE_CACHE_MAX_BYTES
DENSE, SCATTERED = C.LATE_MATERIALIZATION_DENSE_FRACTION, C.LATE_MATERIALIZATION_SCATTERED_FRACTION

#: Flag combinations; case ``i`` runs under three consecutive ones (from ``i``), so every case has late
#: materialization both on and off, and every value of every flag is used.
COMBOS: list[dict[str, str]] = [
    {LM: "true", DP: "true", C.OUTPUT: "columnar"},
    {LM: "true", DP: "false", CACHE: "0", C.OUTPUT: "row", C.BATCH_SIZE: "37", C.SELECTION_POLICY: "selectors"},
    {LM: "false", DP: "true", CACHE: "200", C.OUTPUT: "columnar", DENSE: "0", C.SELECTION_POLICY: "mask"},
    {LM: "true", DP: "true", CACHE: "200", C.OUTPUT: "row", DENSE: "1", SCATTERED: "1", C.SELECTION_POLICY: "mask"},
    {LM: "false", DP: "false", CACHE: "0", C.OUTPUT: "row", C.BATCH_SIZE: "37"},
    {LM: "true", DP: "false", C.OUTPUT: "columnar", DENSE: "0", C.BATCH_SIZE: "37", C.SELECTION_POLICY: "auto"},
    {LM: "false", DP: "true", C.OUTPUT: "row", DENSE: "1", SCATTERED: "1", C.SELECTION_POLICY: "selectors"},
]


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lm_files(tmp_path_factory) -> dict[str, tuple[Path, pa.Table]]:
    root = tmp_path_factory.mktemp("late_materialization")
    out = {}
    for i, (name, (nulls, sort_by, options)) in enumerate(FILES.items()):
        rng = random.Random(SEED * 31 + i)
        names = sorted(rng.sample(sorted(COLUMNS), rng.randint(4, 9)))
        if sort_by and sort_by not in names:
            names.append(sort_by)
        table = datagen.make_table({n: COLUMNS[n] for n in names}, ROWS, SEED + 101 * i, nulls)
        if name.endswith("all_null_column"):
            table = table.append_column(pa.field("c_all_null", pa.int64()), pa.nulls(ROWS, pa.int64()))
        if sort_by:
            table = table.sort_by(sort_by)
        out[name] = (datagen.write(table, root / f"{name}.parquet", **options), table)
    return out


# --------------------------------------------------------------------------------------------
# SQL literals and random cases
# --------------------------------------------------------------------------------------------


def _quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _floating(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def literal(typ: pa.DataType, v) -> str:
    """A SQL literal of the Spark type that ``typ`` is read as."""
    if v is None:
        return "NULL"
    if pa.types.is_boolean(typ):
        return "true" if v else "false"
    if pa.types.is_int8(typ):
        return f"CAST({v} AS TINYINT)"
    if pa.types.is_int16(typ):
        return f"CAST({v} AS SMALLINT)"
    if pa.types.is_int32(typ):
        return str(v)
    if pa.types.is_int64(typ):
        return f"{v}L"
    if pa.types.is_float32(typ):
        return f"CAST('{_floating(v)}' AS FLOAT)"
    if pa.types.is_float64(typ):
        return f"CAST('{_floating(v)}' AS DOUBLE)"
    if pa.types.is_decimal(typ):
        return f"CAST('{format(v, 'f')}' AS DECIMAL({typ.precision},{typ.scale}))"
    if pa.types.is_date32(typ):
        return f"DATE'{v.isoformat()}'"
    if pa.types.is_timestamp(typ):
        text = v.astimezone(dt.timezone.utc).replace(tzinfo=None) if v.tzinfo else v
        prefix = "TIMESTAMP" if typ.tz else "TIMESTAMP_NTZ"
        return f"{prefix}'{text.strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    if pa.types.is_string(typ):
        return _quote(v)
    if pa.types.is_binary(typ):
        return "X'" + bytes(v).hex().upper() + "'"
    raise ValueError(f"no literal for {typ}")


def _numeric(typ: pa.DataType) -> bool:
    return pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ)


class CaseGen:
    """Seeded random predicates (over 1-3 columns) and projections for one table."""

    def __init__(self, table: pa.Table, rng: random.Random):
        self.rng = rng
        self.types = {f.name: f.type for f in table.schema}
        self.values = {n: table.column(n).to_pylist() for n in table.column_names}
        self.non_null = {n: [v for v in vs if v is not None] for n, vs in self.values.items()}

    def value(self, col: str):
        vs = self.non_null[col]
        return self.rng.choice(vs) if vs else None

    def lit(self, col: str) -> str:
        return literal(self.types[col], self.value(col))

    def leaf(self, col: str, others: list[str]) -> str:
        r, t, n = self.rng, self.types[col], f"`{col}`"
        if not self.non_null[col]:
            return r.choice([f"{n} IS NULL", f"{n} IS NOT NULL", f"{n} <=> NULL"])
        if pa.types.is_boolean(t):
            return r.choice([n, f"NOT {n}", f"{n} = false", f"{n} IS NULL", f"{n} IN (true, NULL)", f"{n} <=> true"])
        k = r.randrange(100)
        if k < 25:
            return f"{n} {r.choice(['=', '<', '<=', '>', '>=', '!='])} {self.lit(col)}"
        if k < 32:
            return f"{n} <=> {self.lit(col) if r.random() < 0.8 else 'NULL'}"
        if k < 45:
            items = [self.lit(col) for _ in range(r.randint(1, 4))] + (["NULL"] if r.random() < 0.3 else [])
            return f"{n} {'NOT IN' if r.random() < 0.2 else 'IN'} ({', '.join(items)})"
        if k < 53:
            return f"{n} IS {'NOT ' if r.random() < 0.5 else ''}NULL"
        if k < 65 and pa.types.is_string(t):
            s = [ch for ch in self.value(col) if ch not in "%_\\"]
            i = r.randrange(len(s) + 1)
            part = "".join(s[i:i + r.randint(0, 2)])
            pattern = r.choice([f"{part}%", f"%{part}", f"%{part}%"])
            return r.choice([f"{n} LIKE {_quote(pattern)}", f"startswith({n}, {_quote(part)})"])
        if k < 75:  # expressions lmspark leaves to Spark's Filter
            if _numeric(t):
                return f"abs(CAST({n} AS DOUBLE)) + 1 > abs(CAST({self.lit(col)} AS DOUBLE))"
            if pa.types.is_string(t) or pa.types.is_binary(t):
                return f"length({n}) > {r.randint(0, 6)}"
            if pa.types.is_date32(t):
                return f"year({n}) >= {r.choice([1990, 2000, 2010])}"
            return f"hour({n}) < 12"
        if k < 82:
            return f"({n} IS NULL OR {n} IS NOT NULL)"
        if k < 90 and others:
            other = r.choice(others)
            if _numeric(t) and _numeric(self.types[other]):
                return f"CAST({n} AS DOUBLE) > CAST(`{other}` AS DOUBLE)"
            return f"({n} = {self.lit(col)} OR `{other}` IS NULL)"
        return f"{n} = {self.lit(col)}"  # a point predicate: one row's value

    def tree(self, cols: list[str], depth: int) -> str:
        r = self.rng
        if depth == 0 or r.random() < 0.35:
            col = r.choice(cols)
            return self.leaf(col, [c for c in cols if c != col])
        op = r.randrange(10)
        if op < 4:
            return f"({self.tree(cols, depth - 1)} AND {self.tree(cols, depth - 1)})"
        if op < 8:
            return f"({self.tree(cols, depth - 1)} OR {self.tree(cols, depth - 1)})"
        return f"NOT ({self.tree(cols, depth - 1)})"

    def case(self, path: Path) -> str:
        r = self.rng
        names = list(self.types)
        filtered = r.sample(names, r.choice([1, 1, 2, 2, 3]))
        where = self.tree(filtered, r.randint(0, 3))
        others = [c for c in names if c not in filtered]
        k = r.randrange(100)
        if k < 20:
            select = "*"
        elif k < 35:
            select = "count(*)"
        elif k < 60 and others:
            select = ", ".join(f"`{c}`" for c in r.sample(others, r.randint(1, len(others))))
        else:
            cols = r.sample(filtered, r.randint(1, len(filtered))) + r.sample(others, r.randint(0, len(others)))
            select = ", ".join(f"`{c}`" for c in cols)
        return f"SELECT {select} FROM parquet.`{path}` WHERE {where}"


# --------------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("file_index", range(len(FILES)), ids=list(FILES))
def test_late_materialization_differential(spark, lm_files, file_index):
    name = list(FILES)[file_index]
    path, table = lm_files[name]
    gen = CaseGen(table, random.Random(SEED * 1009 + file_index))
    failures = []
    for j in range(CASES_PER_FILE):
        number = file_index * CASES_PER_FILE + j
        sql = gen.case(path)
        expected, ref_plan, ref_cols = run_query(spark, sql, REFERENCE_CONF)
        scans = SPARK_NODE in ref_plan  # false only when the optimizer proved the filter false
        for combo in (COMBOS[(number + k) % len(COMBOS)] for k in range(3)):
            where = (
                f"[seed {SEED}, case {number}] file {name} ({FILES[name]}, columns {table.column_names}), "
                f"flags {combo}\n  SQL: {sql}"
            )
            try:
                run = run_query_full(spark, sql, {**LM_CONF, **combo})
            except Exception as e:  # noqa: BLE001 - a failed query is a finding, reported with its case
                failures.append(f"{where}\n  lmspark failed: {str(e).splitlines()[0][:500]}")
                continue
            if run.columns != ref_cols or run.rows != expected:
                failures.append(f"{where}\n  {describe_difference(run.rows, expected)}")
                continue
            try:
                if scans:
                    assert_lm_read_everything(run)
            except AssertionError as e:
                failures.append(f"{where}\n  {str(e)[:1000]}")
    assert not failures, f"{len(failures)} failures (LMSPARK_TEST_SEED={SEED}):\n" + "\n".join(failures[:6])
