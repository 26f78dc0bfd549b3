"""Delta Lake tables through lmspark, in a real PySpark session with Delta (``delta-spark`` from PyPI,
its jars from Maven Central via ``make delta-jars``; ``make test-delta`` runs this file).

Tables are written by Delta from pyarrow-generated data and changed with Delta's own Python API:
DELETE, UPDATE and MERGE with deletion vectors on, column mapping by ``name`` (renames, a dropped
column) and by ``id``, partitions, schema evolution (an append that adds a column) and time travel
(a version before the DML). Every case runs a seeded random filter and projection with lmspark and
with Delta's own reader (lmspark off, filter pushdown off) and must give exactly the same rows;
lmspark's scan must have read the table itself. Deleted rows never come back: counts are also
checked against the rows the DML leaves, computed in Python.

Skipped unless ``LMSPARK_DELTA_JARS`` names the jars' folder (the session then loads Delta).
``LMSPARK_TEST_SEED`` changes the data and the cases.
"""

from __future__ import annotations

import os
import random
import zlib
from pathlib import Path

import pyarrow as pa
import pytest

import datagen
from conftest import DELTA_JARS, LM_CONF, SPARK_NODE, assert_same_answer, conf, executed_plan, fallback_reasons
from test_late_materialization import COLUMNS as LM_COLUMNS, CaseGen

pytestmark = pytest.mark.skipif(not DELTA_JARS, reason="LMSPARK_DELTA_JARS not set (make test-delta)")

SEED = int(os.environ.get("LMSPARK_TEST_SEED", "20261129"))
ROWS = 3000
#: Columns of the late-materialization suite (datagen's generators go by their names), then ``cat``;
#: ``id`` and ``cat`` are made here.
COLUMNS: dict[str, pa.DataType] = {
    "id": pa.int64(),
    **{n: LM_COLUMNS[n] for n in ("c_int", "c_double", "c_string", "c_date", "c_dec_9_2")},
    "cat": pa.string(),
}


def _data(seed: int) -> pa.Table:
    t = datagen.make_table({n: typ for n, typ in COLUMNS.items() if n not in ("id", "cat")}, ROWS, seed)
    ids = pa.array(range(ROWS), type=pa.int64())
    cats = pa.array([f"c{i % 5}" for i in range(ROWS)], type=pa.string())
    return t.add_column(0, "id", ids).append_column("cat", cats)


def _write(spark, table: pa.Table, path: Path, properties: dict[str, str], partitioned: bool = False) -> str:
    staging = path.parent / (path.name + "-staging")
    datagen.write(table, staging / "part-0.parquet", row_group_size=600)
    settings = {f"spark.databricks.delta.properties.defaults.{k}": v for k, v in properties.items()}
    with conf(spark, settings):
        w = spark.read.parquet(str(staging)).repartition(3).write.format("delta")
        (w.partitionBy("cat") if partitioned else w).save(str(path))
    return str(path)


def _cases(spark, label: str, path: str, table: pa.Table, n: int, version: int | None = None) -> int:
    """``n`` random cases over the Delta table at ``path`` (``table``: values for the literals);
    returns how many lmspark's scan read (the others Spark's optimizer answered with no scan)."""
    from delta.tables import DeltaTable  # noqa: F401  (the PyPI package is installed)

    rng = random.Random(SEED ^ zlib.crc32(label.encode()))
    gen = CaseGen(table, rng)
    source = f"delta.`{path}`" if version is None else f"delta.`{path}@v{version}`"
    served = 0
    for i in range(n):
        sql = gen.case(Path(path)).replace(f"parquet.`{path}`", source)
        try:
            plan = assert_same_answer(spark, sql)
            assert SPARK_NODE not in plan and not fallback_reasons(plan), f"lmspark did not read the table:\n{plan}"
            served += "LmParquetScan" in plan
        except AssertionError as e:
            raise AssertionError(f"{label} case {i} (seed {SEED}): {sql}\n{e}") from None
    return served


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    from delta.tables import DeltaTable

    root = tmp_path_factory.mktemp("delta")
    out = {}

    # Deletion vectors: DELETE, UPDATE, MERGE.
    data = _data(SEED)
    dv = _write(spark, data, root / "dv", {"enableDeletionVectors": "true"})
    t = DeltaTable.forPath(spark, dv)
    t.delete("id % 7 = 3")
    t.update("id % 11 = 5", {"c_int": "c_int % 1000"})
    source = spark.read.format("delta").load(dv).where("id % 13 = 0").selectExpr("id", "c_int", "c_double", "'merged' AS c_string", "c_date", "c_dec_9_2", "cat")
    (t.alias("t").merge(source.alias("s"), "t.id = s.id")
        .whenMatchedDelete("t.id % 2 = 0").whenMatchedUpdate(set={"c_string": "s.c_string"}).execute())
    expected = [i for i in range(ROWS) if i % 7 != 3 and not (i % 13 == 0 and i % 2 == 0)]
    out["dv"] = (dv, data, expected)

    # Column mapping by name: renames (two names swapped) and a dropped column, then new rows.
    cm = _write(spark, _data(SEED + 1), root / "cm-name",
                {"columnMapping.mode": "name", "minReaderVersion": "2", "minWriterVersion": "5"})
    for stmt in ("RENAME COLUMN c_int TO k2", "RENAME COLUMN c_string TO tmp", "RENAME COLUMN cat TO c_string",
                 "RENAME COLUMN tmp TO cat", "DROP COLUMN c_dec_9_2"):
        spark.sql(f"ALTER TABLE delta.`{cm}` {stmt}")
    # (renames keep the columns' places: the table is id, k2, c_double, cat, c_date, c_string)
    spark.sql(f"INSERT INTO delta.`{cm}` SELECT id + {ROWS}, k2, c_double, cat, c_date, c_string "
              f"FROM delta.`{cm}` WHERE id < 500")
    renamed = _data(SEED + 1).drop(["c_dec_9_2"]).rename_columns(["id", "k2", "c_double", "cat", "c_date", "c_string"])
    out["cm-name"] = (cm, renamed, None)

    # Column mapping by id, partitioned, with deletion vectors.
    cid = _write(spark, _data(SEED + 2), root / "cm-id",
                 {"columnMapping.mode": "id", "minReaderVersion": "2", "minWriterVersion": "5",
                  "enableDeletionVectors": "true"}, partitioned=True)
    DeltaTable.forPath(spark, cid).delete("c_int > 500")
    out["cm-id"] = (cid, _data(SEED + 2), None)

    # Schema evolution: an append that adds a column (older files lack it).
    ev = _write(spark, _data(SEED + 3), root / "evolved", {})
    (spark.read.format("delta").load(ev).where("id < 800").selectExpr("id + 10000 AS id", "c_int", "c_double", "c_string", "c_date", "c_dec_9_2", "cat",
        "CAST(c_int AS BIGINT) * 3 AS extra").write.format("delta").mode("append").option("mergeSchema", "true").save(ev))
    out["evolved"] = (ev, _data(SEED + 3), None)
    return out


def test_deletion_vectors_from_dml_never_come_back(spark, tables):
    path, _, expected = tables["dv"]
    with conf(spark, LM_CONF):
        df = spark.read.format("delta").load(path)
        ids = sorted(r.id for r in df.select("id").collect())
        assert "LmParquetScan" in executed_plan(df)
    assert ids == expected


@pytest.mark.parametrize("label,n", [("dv", 40), ("cm-name", 25), ("cm-id", 25), ("evolved", 20)])
def test_random_filters_against_deltas_reader(spark, tables, label, n):
    path, table, _ = tables[label]
    assert _cases(spark, label, path, table, n) >= n // 2


def test_time_travel_before_the_deletes(spark, tables):
    path, table, _ = tables["dv"]
    # Version 0, before DELETE, UPDATE and MERGE: every row, read by lmspark without deletion vectors.
    with conf(spark, LM_CONF):
        assert spark.read.format("delta").option("versionAsOf", 0).load(path).count() == ROWS
    assert _cases(spark, "dv-v0", path, table, 10, version=0) >= 5


@pytest.mark.parametrize("label", ["dv", "cm-id"])
def test_top_k_over_deleted_rows(spark, tables, label):
    """``ORDER BY ... LIMIT`` over a table with deleted rows is read in two passes (``LmTopK``): no
    deleted row is ranked, and the rows kept, with their ``_metadata`` fields, are Delta's."""
    path, _, _ = tables[label]
    rng = random.Random(SEED ^ zlib.crc32(f"top-k {label}".encode()))
    for i in range(6):
        key = rng.choice(["c_int", "c_double", "c_string", "c_date", "c_dec_9_2", "cat"])
        direction = rng.choice(["ASC", "DESC", "ASC NULLS LAST", "DESC NULLS FIRST"])
        limit = rng.choice([1, 5, 40, 700])
        metadata = rng.choice(["", ", _metadata.file_name, _metadata.row_index"])
        # `id` last: the order has no ties, so the rows kept are the same whatever order tasks end in.
        sql = f"SELECT *{metadata} FROM delta.`{path}` ORDER BY {key} {direction}, id LIMIT {limit}"
        try:
            plan = assert_same_answer(spark, sql)
            assert "LmTopK: each task" in plan, f"the top-k was not read in two passes:\n{plan}"
        except AssertionError as e:
            raise AssertionError(f"{label} top-k case {i} (seed {SEED}): {sql}\n{e}") from None
