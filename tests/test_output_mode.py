"""spark.lmspark.output: columnar batches or UnsafeRows, and ``auto`` choosing as Spark chooses.

Both modes must give vanilla Spark's rows (and each other's) on pyarrow-written tables of every
flat type, dictionary-encoded and plain, with partition columns and filters; the executed plan
must show the mode really taken (no ColumnarToRow above a row scan), and ``auto`` must match
what vanilla Spark's own scan does (``Batched: true`` for a narrow schema, ``false`` for a schema
wider than spark.sql.codegen.maxFields).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import datagen
import lmspark
from conftest import (
    FILES_FALLBACK,
    FILES_READ,
    LM_CONF,
    LM_NODE,
    REFERENCE_CONF,
    SPARK_NODE,
    assert_same_answer_and_lm_used,
    run_query_full,
)

OUTPUT = getattr(getattr(lmspark, "conf", None), "OUTPUT", "spark.lmspark.output")

#: Every flat type the reader serves, decimals of each width included.
COLUMNS = {**datagen.SUPPORTED_COLUMNS, **{k: v for k, v in datagen.OTHER_FLAT_COLUMNS.items()
                                           if k in ("c_int8", "c_int16", "c_dec_9_2", "c_dec_18_4", "c_dec_30_5")}}
WIDE_COPIES = 7  # 17 columns x 7 copies + a partition column: 120 fields, over codegen's 100


def _write_partitioned(root: Path, columns: dict, copies: int, seed: int) -> Path:
    """Two partitions (k=1, k=2) of two files each; file 0 dictionary-encoded, file 1 plain."""
    for k in (1, 2):
        for i in range(2):
            parts = [datagen.make_table(columns, 700, seed + 100 * c + 10 * k + i, "some") for c in range(copies)]
            if copies == 1:
                t = parts[0]
            else:
                t = pa.table({f"{name}_{c}": part.column(name) for c, part in enumerate(parts) for name in columns})
            datagen.write(t, root / f"k={k}" / f"f{i}.parquet", use_dictionary=(i == 0), row_group_size=300)
    return root


@pytest.fixture(scope="module")
def narrow(tmp_path_factory) -> Path:
    return _write_partitioned(tmp_path_factory.mktemp("output_narrow"), COLUMNS, 1, 70)


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> Path:
    return _write_partitioned(tmp_path_factory.mktemp("output_wide"), COLUMNS, WIDE_COPIES, 80)


def _assert_mode(plan: str, columnar: bool) -> None:
    assert LM_NODE in plan, plan
    want = "columnar" if columnar else "row"
    assert f"LmOutput: {want}" in plan, plan
    assert f"Batched: {str(columnar).lower()}" in plan, plan
    if columnar:
        assert "ColumnarToRow" in plan, plan
    else:
        assert "ColumnarToRow" not in plan, f"row output, yet ColumnarToRow in the plan:\n{plan}"


def _query(name: str, path: Path, wide: bool):
    """A query over the table; the wide table's columns carry a copy suffix."""
    c = (lambda n: f"{n}_3") if wide else (lambda n: n)
    if name == "all":
        return lambda s: s.read.parquet(str(path))
    if name == "filtered":
        return lambda s: s.read.parquet(str(path)).where(
            f"({c('c_int')} > 0 OR {c('c_string')} IS NULL OR {c('c_dec_30_5')} < 0) AND k = 2")
    return lambda s: s.read.parquet(str(path)).groupBy("k").count()


@pytest.mark.parametrize("table", ["narrow", "wide"])
@pytest.mark.parametrize("query", ["all", "filtered", "aggregate"])
def test_row_and_columnar_agree_with_vanilla(spark, request, table, query):
    q = _query(query, request.getfixturevalue(table), wide=(table == "wide"))
    runs = {}
    for mode in ("columnar", "row"):
        plan = assert_same_answer_and_lm_used(spark, q, lm_conf={OUTPUT: mode})
        _assert_mode(plan, columnar=(mode == "columnar"))
        runs[mode] = run_query_full(spark, q, {**LM_CONF, OUTPUT: mode})
    assert runs["row"].rows == runs["columnar"].rows
    for key in (FILES_READ, FILES_FALLBACK, "rowGroupsRead", "lmBytesRead"):
        assert runs["row"].metrics[key] == runs["columnar"].metrics[key], (key, runs["row"].metrics)
    assert runs["row"].metrics[FILES_FALLBACK] == 0


@pytest.mark.parametrize("table, vanilla_batched", [("narrow", True), ("wide", False)])
def test_auto_matches_vanilla(spark, request, table, vanilla_batched):
    path = request.getfixturevalue(table)
    q = lambda s: s.read.parquet(str(path)).where("k = 1")  # noqa: E731
    vanilla = run_query_full(spark, q, REFERENCE_CONF).plan
    assert SPARK_NODE in vanilla and f"Batched: {str(vanilla_batched).lower()}" in vanilla, vanilla
    plan = assert_same_answer_and_lm_used(spark, q, lm_conf={OUTPUT: "auto"})
    _assert_mode(plan, columnar=vanilla_batched)
