"""Every file of the parquet-testing corpus, lmspark on against vanilla Spark.

For each file (one test id per file):
 - vanilla Spark (lmspark off, Parquet filter pushdown off) reads it -> with lmspark on, the query
   must not fail, must give the identical result, and the plan either uses LmParquetScan or shows a
   clean fallback with a non-empty reason;
 - vanilla Spark cannot read it (encrypted, corrupt, malformed, unsupported type) -> lmspark must
   fail too (any message), and the JVM must still answer afterwards; the test is then recorded as
   skipped with vanilla's reason. Should lmspark read it anyway, its answer must equal that of
   Spark's row-based reader (also recorded as skipped, with that note), and with no Spark reader
   able to read the file, an lmspark answer fails the test;
 - nested schemas (struct/array/map) are out of scope for now: they are still run, to check that
   lmspark falls back cleanly with the same answer, then recorded as skipped.

The corpus lives outside the repository: ``<repo>/../shared/corpus`` (or ``$LMSPARK_CORPUS``,
the folder holding ``catalogue.csv``).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from pyspark.sql import types as T

from conftest import (
    LM_CONF,
    LM_NODE,
    REFERENCE_CONF,
    REPO_ROOT,
    assert_clean_fallback,
    describe_difference,
    lm_status,
    run_query,
)

CORPUS_ROOT = Path(os.environ.get("LMSPARK_CORPUS", REPO_ROOT.parent / "shared" / "corpus"))
DATA = CORPUS_ROOT / "parquet-testing" / "data"

if not DATA.is_dir():
    pytest.skip(f"parquet-testing corpus not found at {DATA} (set LMSPARK_CORPUS)", allow_module_level=True)

#: Files not run at all, and why.
NOT_RUN = {
    "large_string_map.brotli.parquet": "memory stress: a >2 GiB string column chunk needs 4+ GB of heap; "
    "the test session runs with a 3g driver",
}


def _catalogue() -> dict[str, dict]:
    path = CORPUS_ROOT / "catalogue.csv"
    if not path.is_file():
        return {}
    with path.open(newline="") as f:
        return {Path(r["path"]).name: r for r in csv.DictReader(f)}


CATALOGUE = _catalogue()


def _corpus_files() -> list[Path]:
    return sorted(
        p for p in DATA.rglob("*") if p.is_file() and (p.name.endswith(".parquet") or p.name.endswith(".parquet.encrypted"))
    )


FILES = _corpus_files()


def _is_nested(dtype: T.DataType) -> bool:
    return isinstance(dtype, (T.StructType, T.ArrayType, T.MapType))


def _note(path: Path) -> str:
    row = CATALOGUE.get(path.name)
    return f" [catalogue: {row['notes']}]" if row and row.get("notes") else ""


def _first_line(e: BaseException) -> str:
    """The most telling line of an error: the innermost 'Caused by', else the first line."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    causes = [ln for ln in lines if ln.startswith("Caused by:")]
    if causes:
        return causes[-1][len("Caused by:"):].strip()[:300]
    for line in lines:
        if not line.startswith(("Traceback", "JVM stacktrace")):
            return line[:300]
    return type(e).__name__


def _jvm_alive(spark) -> None:
    assert spark.range(3).count() == 3, "the Spark session no longer answers"


def _vanilla_fails(spark, path: Path, reason: str) -> None:
    """Vanilla Spark cannot read the file: lmspark must fail cleanly too. If lmspark reads it
    anyway, its answer must be what Spark's row-based (parquet-mr) reader gives; with no Spark
    reader able to read it, an lmspark answer is an error."""
    p, note = str(path), _note(path)
    try:
        lm = {name: run_query(spark, make(p), LM_CONF) for name, make in QUERIES.items()}
    except Exception:  # noqa: BLE001 - any failure will do, as long as it is clean
        _jvm_alive(spark)
        pytest.skip(f"{path.relative_to(DATA)}: vanilla Spark cannot read it ({reason}); lmspark fails as well")
    _jvm_alive(spark)
    try:
        rows_ref = {name: run_query(spark, make(p), {**REFERENCE_CONF, **ROW_READER}) for name, make in QUERIES.items()}
    except Exception as e:  # noqa: BLE001
        pytest.fail(
            f"vanilla Spark fails ({reason}), and so does its row-based reader ({_first_line(e)}), "
            f"but lmspark returned a result ({lm_status(lm['select *'][1])}){note}"
        )
    for name in QUERIES:
        lm_rows, lm_plan, _ = lm[name]
        ref_rows, _, _ = rows_ref[name]
        assert lm_rows == ref_rows, (
            f"{name}: vanilla Spark's vectorized reader fails ({reason}); lmspark's result differs from "
            f"Spark's row-based reader{note}\n" + describe_difference(lm_rows, ref_rows) + f"\nlmspark plan:\n{lm_plan}"
        )
    pytest.skip(
        f"{path.relative_to(DATA)}: vanilla Spark's vectorized reader fails ({reason}); lmspark reads it "
        f"({lm_status(lm['select *'][1])}) and matches Spark's row-based reader"
    )


#: Spark's other Parquet reader, the reference when the vectorized one cannot read a file.
ROW_READER = {"spark.sql.parquet.enableVectorizedReader": "false"}

def _reversed(df):
    return df.select(*[f"`{c}`" for c in reversed(df.columns)])


def _first_not_null(df):
    return df.where(df[f"`{df.columns[0]}`"].isNotNull()) if df.columns else df


QUERIES = {
    "select *": lambda p: (lambda s: s.read.parquet(p)),
    "count(*)": lambda p: (lambda s: s.read.parquet(p).groupBy().count()),
    "columns reversed": lambda p: (lambda s: _reversed(s.read.parquet(p))),
    "first column not null": lambda p: (lambda s: _first_not_null(s.read.parquet(p))),
}


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(DATA)) for p in FILES])
def test_corpus_file(spark, path: Path):
    if path.name in NOT_RUN:
        pytest.skip(NOT_RUN[path.name])
    p = str(path)
    note = _note(path)

    # What can vanilla Spark do with it?
    try:
        ref = {name: run_query(spark, make(p), REFERENCE_CONF) for name, make in QUERIES.items()}
        schema = spark.read.parquet(p).schema
    except Exception as ref_error:  # noqa: BLE001 - vanilla's failure is the expectation here
        _vanilla_fails(spark, path, _first_line(ref_error))
        return

    nested = any(_is_nested(f.dataType) for f in schema.fields)

    statuses = []
    for name, make in QUERIES.items():
        ref_rows, ref_plan, ref_cols = ref[name]
        try:
            lm_rows, lm_plan, lm_cols = run_query(spark, make(p), LM_CONF)
        except Exception as lm_error:  # noqa: BLE001
            _jvm_alive(spark)
            pytest.fail(f"{name}: lmspark fails where vanilla Spark succeeds: {_first_line(lm_error)}{note}")
        assert LM_NODE not in ref_plan, ref_plan
        if LM_NODE not in lm_plan:
            assert_clean_fallback(lm_plan)
        assert lm_cols == ref_cols
        assert lm_rows == ref_rows, (
            f"{name}: results differ ({lm_status(lm_plan)}){note}\n"
            + describe_difference(lm_rows, ref_rows)
            + f"\nlmspark plan:\n{lm_plan}"
        )
        statuses.append(f"{name}: {lm_status(lm_plan)}")

    if nested:
        pytest.skip(f"{path.relative_to(DATA)}: nested: out of scope for now (checked: same answer; " + "; ".join(statuses) + ")")
    print("; ".join(statuses))


def test_corpus_not_empty():
    assert len(FILES) > 50, f"only {len(FILES)} files found under {DATA}"
