"""Every file of the parquet-testing corpus, lmspark on against vanilla Spark (and pyarrow).

For each file (one test id per file), flat and nested schemas (struct/array/map) alike:
 - vanilla Spark (lmspark off, Parquet filter pushdown off) reads it -> with lmspark on, the
   queries must not fail and must give the identical result; the plan either uses
   LmParquetScan or shows a clean fallback with a non-empty reason, and a file lmspark hands to
   Spark's reader at run time must have its reason logged. The outcome is "identical via
   lmspark" only when every query ran LmParquetScan and its scan metrics show no file handed to
   Spark's reader; otherwise it is "fallback: <reasons>" (the queries that fell back named when
   ``select *`` did not);
 - vanilla Spark cannot read it (encrypted, corrupt, unsupported type, BYTE_STREAM_SPLIT,
   non-Hadoop LZ4, ...) -> if lmspark fails as well (cleanly: the JVM still answers), the test
   is recorded as skipped with vanilla's reason, unless the file is one lmspark must read
   (``MUST_READ``). If lmspark reads it, its answer must equal pyarrow's (converted to Spark's
   values, see ``arrow_oracle``) and that of Spark's row-based reader where either can read the
   file; with no reader able to check it, an lmspark answer fails the test;
 - a file in ``NOT_RUN`` (memory stress) is recorded as skipped with its reason.

Where the corpus documents a file's contents (``*_expect.csv``, ``int96_from_spark.md``, the
page statistics in ``fixed_length_byte_array.md`` / ``int32_with_null_pages.md``, the value in
``old_list_structure.md``, and notes in its README), lmspark's answer is checked against them as
well, parsed from those files.

Each file's outcome goes into ``tests/corpus_outcomes/spark<line>.md`` (one table per Spark line); the last test compares that table
with what this run observed (regenerate with ``LMSPARK_WRITE_CORPUS_TABLE=1``).

The corpus lives outside the repository: ``<repo>/../shared/corpus`` (or ``$LMSPARK_CORPUS``,
the folder holding ``catalogue.csv``).
"""

from __future__ import annotations

import csv
import difflib
import os
import re
from collections import Counter
from pathlib import Path
from typing import Callable

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

import arrow_oracle
from conftest import (
    LM_CONF,
    LM_NODE,
    REFERENCE_CONF,
    REPO_ROOT,
    FILES_FALLBACK,
    FILES_READ,
    assert_lm_read_everything,
    capture_lm_log,
    describe_difference,
    error_summary,
    fallback_explanation,
    first_column_not_null,
    jvm_alive,
    lm_status,
    reversed_columns,
    run_query_full,
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

#: Files vanilla Spark cannot read that lmspark must read, and the feature that makes it so.
MUST_READ = {
    "byte_stream_split.zstd.parquet": "BYTE_STREAM_SPLIT",
    "byte_stream_split_extended.gzip.parquet": "BYTE_STREAM_SPLIT on FLOAT, DOUBLE, INT32, INT64, FLBA",
    "non_hadoop_lz4_compressed.parquet": "LZ4 blocks without Hadoop framing",
}

#: Files whose schema Spark cannot infer as a whole: they are read with an explicit schema of
#: the columns Spark has a type for (from pyarrow's schema, see ``arrow_oracle.spark_ddl``).
EXPLICIT_SCHEMA = {
    "byte_stream_split_extended.gzip.parquet": "FLOAT16 columns left out: Spark has no type for them",
}

#: The outcome table, and the variable that makes a run rewrite it.
def _spark_line() -> str:
    import pyspark

    return ".".join(pyspark.__version__.split(".")[:2])


#: One table per Spark line: what each line's Spark reads differs (4.3 reads geospatial types).
OUTCOME_TABLE = REPO_ROOT / "tests" / "corpus_outcomes" / f"spark{_spark_line()}.md"
WRITE_TABLE_ENV = "LMSPARK_WRITE_CORPUS_TABLE"
#: Corpus file (relative path) -> outcome, filled in by test_corpus_file.
OUTCOMES: dict[str, str] = {}


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


def _rel(path: Path) -> str:
    return str(path.relative_to(DATA))


def _note(path: Path) -> str:
    row = CATALOGUE.get(path.name)
    return f" [catalogue: {row['notes']}]" if row and row.get("notes") else ""


def _short(text: str, limit: int = 160) -> str:
    """A reason as it goes into the outcome table: one line, no local paths, bounded."""
    text = text.replace(f"file://{DATA}/", "").replace(f"file:{DATA}/", "").replace(f"{DATA}/", "")
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: Spark's other Parquet reader, an oracle when the vectorized one cannot read a file.
ROW_READER = {"spark.sql.parquet.enableVectorizedReader": "false"}

#: query name -> (what Spark runs on the file's DataFrame, the same on oracle rows)
QUERIES = {
    "select *": (lambda df: df, lambda rows: rows),
    "count(*)": (lambda df: df.groupBy().count(), lambda rows: [(len(rows),)]),
    "columns reversed": (reversed_columns, lambda rows: [tuple(reversed(r)) for r in rows]),
    "first column not null": (first_column_not_null, lambda rows: [r for r in rows if r and r[0] is not None]),
}


def _explicit_schema(path: Path) -> str | None:
    if path.name not in EXPLICIT_SCHEMA:
        return None
    ddl, dropped = arrow_oracle.spark_ddl(pq.read_schema(str(path)))
    assert dropped, f"{path.name}: expected columns Spark cannot read"
    return ddl


def _reader(path: Path):
    schema = _explicit_schema(path)
    p = str(path)
    return lambda s: (s.read.schema(schema) if schema else s.read).parquet(p)


def _queries(path: Path) -> dict:
    read = _reader(path)
    return {name: (lambda s, shape=shape: shape(read(s))) for name, (shape, _) in QUERIES.items()}


# --------------------------------------------------------------------------------------------
# One file
# --------------------------------------------------------------------------------------------


def _vanilla_fails(spark, path: Path, reason: str) -> tuple[str, str | None]:
    """Vanilla Spark cannot read the file. lmspark must then read it if it is in MUST_READ,
    else may fail (cleanly); if it answers, the answer must equal every oracle that can read
    the file (pyarrow, Spark's row-based reader), and at least one must."""
    rel, note = _rel(path), _note(path)
    queries = _queries(path)
    try:
        lm = {name: run_query_full(spark, q, LM_CONF) for name, q in queries.items()}
    except Exception as e:  # noqa: BLE001 - any failure will do, as long as it is clean
        jvm_alive(spark)
        if path.name in MUST_READ:
            pytest.fail(f"vanilla Spark cannot read it ({reason}); lmspark must ({MUST_READ[path.name]}), "
                        f"but fails: {error_summary(e)}{note}")
        return f"vanilla can't read: {_short(reason)}", (
            f"{rel}: vanilla Spark cannot read it ({reason}); lmspark fails as well"
        )
    jvm_alive(spark)

    checked, unable = [], []
    # pyarrow, converted to Spark's values for the schema lmspark read the file with
    try:
        base = arrow_oracle.spark_rows(arrow_oracle.read_table(path), lm["select *"].schema)
    except Exception as e:  # noqa: BLE001
        unable.append(f"pyarrow: {error_summary(e, 120)}")
    else:
        for name, (_, shape_rows) in QUERIES.items():
            expected = Counter(shape_rows(base))
            assert lm[name].rows == expected, (
                f"{name}: vanilla Spark fails ({reason}); lmspark's result differs from pyarrow's{note}\n"
                + describe_difference(lm[name].rows, expected) + f"\nlmspark plan:\n{lm[name].plan}"
            )
        checked.append("pyarrow")
    # Spark's row-based (parquet-mr) reader
    try:
        rows_ref = {name: run_query_full(spark, q, {**REFERENCE_CONF, **ROW_READER}) for name, q in queries.items()}
    except Exception as e:  # noqa: BLE001
        unable.append(f"Spark's row-based reader: {error_summary(e, 120)}")
    else:
        for name in QUERIES:
            assert lm[name].rows == rows_ref[name].rows, (
                f"{name}: vanilla Spark's vectorized reader fails ({reason}); lmspark's result differs from "
                f"Spark's row-based reader{note}\n" + describe_difference(lm[name].rows, rows_ref[name].rows)
            )
        checked.append("Spark's row-based reader")
    if not checked:
        pytest.fail(f"vanilla Spark fails ({reason}), and no other reader can read the file ({'; '.join(unable)}), "
                    f"but lmspark returned a result ({lm_status(lm['select *'].plan)}){note}")
    if path.name in MUST_READ:
        assert_lm_read_everything(lm["select *"])
    outcome = f"lmspark reads where vanilla can't: checked against {' and '.join(checked)}"
    if path.name in EXPLICIT_SCHEMA:
        outcome += f"; {EXPLICIT_SCHEMA[path.name]}"
    return outcome, None


def _check_file(spark, path: Path) -> tuple[str, str | None]:
    """(outcome for the table, skip message or None); fails the test on a wrong answer."""
    note = _note(path)
    if path.name in NOT_RUN:
        return f"not run: {NOT_RUN[path.name].split(':')[0]}", NOT_RUN[path.name]

    queries = _queries(path)
    try:
        ref = {name: run_query_full(spark, q, REFERENCE_CONF) for name, q in queries.items()}
    except Exception as ref_error:  # noqa: BLE001 - vanilla's failure is the expectation here
        return _vanilla_fails(spark, path, error_summary(ref_error))

    statuses, star_metrics = [], {}
    #: fallback reason -> the queries that gave it (plan-level declines and per-file hand-overs)
    fallbacks: dict[str, list[str]] = {}
    for name, q in queries.items():
        with capture_lm_log(spark) as log:
            try:
                lm = run_query_full(spark, q, LM_CONF)
            except Exception as lm_error:  # noqa: BLE001
                jvm_alive(spark)
                pytest.fail(f"{name}: lmspark fails where vanilla Spark succeeds: {error_summary(lm_error)}{note}")
        assert LM_NODE not in ref[name].plan, ref[name].plan
        reasons = fallback_explanation(lm, log)
        assert lm.columns == ref[name].columns
        assert lm.rows == ref[name].rows, (
            f"{name}: results differ ({lm_status(lm.plan)}){note}\n"
            + describe_difference(lm.rows, ref[name].rows)
            + f"\nlmspark plan:\n{lm.plan}"
        )
        per_file = f" (files handed to Spark's reader: {'; '.join(reasons)})" if reasons and LM_NODE in lm.plan else ""
        statuses.append(f"{name}: {lm_status(lm.plan)}{per_file}")
        for reason in reasons:
            fallbacks.setdefault(reason, []).append(name)
        if name == "select *":
            star_metrics = lm.metrics

    print("; ".join(statuses))
    if fallbacks:
        star = [r for r, names in fallbacks.items() if "select *" in names]
        others = [f"{', '.join(names)}: {r}" for r, names in fallbacks.items() if "select *" not in names]
        return "fallback: " + "; ".join(_short(r) for r in star + others), None
    if star_metrics[FILES_READ] == 0 and star_metrics[FILES_FALLBACK] == 0:
        return "identical via lmspark (no file read: nothing to scan)", None
    return "identical via lmspark", None


@pytest.mark.parametrize("path", FILES, ids=[_rel(p) for p in FILES])
def test_corpus_file(spark, path: Path):
    rel = _rel(path)
    try:
        outcome, skip = _check_file(spark, path)
    except pytest.skip.Exception:
        raise
    except BaseException as e:
        OUTCOMES[rel] = f"test fails: {_short(error_summary(e), 120)}"
        raise
    OUTCOMES[rel] = outcome
    if skip:
        pytest.skip(skip)


def test_corpus_not_empty():
    assert len(FILES) > 50, f"only {len(FILES)} files found under {DATA}"


# --------------------------------------------------------------------------------------------
# Contents the corpus documents, parsed from its own files
# --------------------------------------------------------------------------------------------


def _lm_rows(spark, path: Path) -> list[tuple]:
    """``SELECT *`` with lmspark on, in file order (one small file: one task, read in order)."""
    return run_query_full(spark, _reader(path), LM_CONF).ordered


def _plain(v):
    """A normalised value (see conftest.normalise) back to a plain Python value."""
    if isinstance(v, tuple) and len(v) == 2 and v[0] in ("float", "bytes", "decimal"):
        kind, raw = v
        return float(raw) if kind == "float" else raw
    return v


def _split_csv_line(line: str) -> list[str | None]:
    """One line of the corpus' ``*_expect.csv``: a quoted field is a string (possibly empty),
    an unquoted empty field is null. (The csv module cannot tell those apart.)"""
    values, i, n = [], 0, len(line)
    while True:
        if i < n and line[i] == '"':
            parts, j = [], i + 1
            while True:
                k = line.index('"', j)
                if line[k + 1 : k + 2] == '"':  # an escaped quote
                    parts.append(line[j : k + 1])
                    j = k + 2
                    continue
                parts.append(line[j:k])
                i = k + 1
                break
            values.append("".join(parts))
        else:
            k = line.find(",", i)
            k = n if k < 0 else k
            values.append(line[i:k] or None)
            i = k
        if i >= n:
            return values
        assert line[i] == ",", f"malformed CSV line: {line!r}"
        i += 1


def _parse_expect_csv(path: Path) -> tuple[list[str], list[tuple]]:
    lines = [ln for ln in path.read_text().splitlines() if ln]
    return _split_csv_line(lines[0]), [tuple(_split_csv_line(ln)) for ln in lines[1:]]


def _check_expect_csv(spark, path: Path) -> str:
    header, expected = _parse_expect_csv(DATA / path.name.replace(".parquet", "_expect.csv"))
    got = [tuple(None if v is None else str(_plain(v)) for v in r) for r in _lm_rows(spark, path)]
    assert all(len(r) == len(header) for r in got), f"{len(header)} columns expected"
    assert len(got) == len(expected), f"{len(got)} rows read, {len(expected)} expected"
    bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert not bad, f"{len(bad)} rows differ from the expected CSV, first: row {bad[0][0]}: {bad[0][1]} vs {bad[0][2]}"
    return f"{len(got)} rows x {len(header)} columns equal {path.name.replace('.parquet', '_expect.csv')}"


def _check_int96_md(spark, path: Path) -> str:
    text = (DATA / "int96_from_spark.md").read_text()
    block = re.search(r"As microseconds since the epoch, they correspond to:\s*```\s*(.*?)```", text, re.S)
    assert block, "int96_from_spark.md: the list of expected microseconds was not found"
    expected = [None if v.strip() == "null" else int(v) for v in block.group(1).replace("\n", " ").split(",")]
    got = [r[0] for r in _lm_rows(spark, path)]
    assert got == expected
    return f"{len(got)} timestamps equal the microseconds listed in int96_from_spark.md"


def _page_stats(md_text: str) -> tuple[int, list[tuple[int, str, str, int]]]:
    """From a parquet-cli dump: total rows, and per page (null count, min, max, first row)."""
    total = int(re.search(r"Row group 0:\s+count:\s+(\d+)", md_text).group(1))
    ci = re.search(r"column index for column \S+:.*?\n(.*?)\n\s*\n", md_text, re.S).group(1)
    stats = [m.groups() for m in re.finditer(r"^page-(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s*$", ci, re.M)]
    oi = re.search(r"offset index for column \S+:\s*\n(.*?)```", md_text, re.S).group(1)
    first = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^page-(\d+)\s+\d+\s+\d+\s+(\d+)", oi, re.M)}
    assert stats and len(first) == len(stats), "could not parse the page index dump"
    return total, [(int(n), lo, hi, first[int(i)]) for i, n, lo, hi in stats]


def _check_page_stats_md(spark, path: Path) -> str:
    total, pages = _page_stats((DATA / path.name.replace(".parquet", ".md")).read_text())
    values = [_plain(r[0]) for r in _lm_rows(spark, path)]
    assert len(values) == total
    ends = [p[3] for p in pages[1:]] + [total]

    def parse(s: str):
        return bytes.fromhex(s[2:]) if s.startswith("0x") else int(s)

    for (nulls, lo, hi, start), end in zip(pages, ends):
        page = values[start:end]
        present = [v for v in page if v is not None]
        assert len(page) - len(present) == nulls, f"rows {start}..{end}: {len(page) - len(present)} nulls, {nulls} documented"
        if lo == "<none>":
            assert not present
        else:
            assert (min(present), max(present)) == (parse(lo), parse(hi)), f"rows {start}..{end}: min/max differ"
    return f"{len(pages)} pages: null counts and min/max equal the documented column index"


def _readme() -> str:
    return (DATA / "README.md").read_text()


def _check_truncated_stats(spark, path: Path) -> str:
    """README: exact min/max statistics equal the data's; truncated ones bound it."""
    section = _readme().split("## Binary truncated min and max statistics", 1)[1]
    rows = re.findall(r"^\|(\w+)\s*\|(.+?)\|(true|false)\s*\|(.+?)\|(true|false)\s*\|\s*$", section, re.M)
    assert len(rows) == 6, rows
    df_rows = run_query_full(spark, _reader(path), LM_CONF)
    columns = df_rows.columns

    def value(s: str):
        s = s.strip().strip('"')
        return bytes.fromhex(s[2:]) if s.startswith("0x") else s

    for name, lo, lo_exact, hi, hi_exact in rows:
        data = [_plain(r[columns.index(name)]) for r in df_rows.ordered]
        if isinstance(data[0], str):
            data = [d.encode() for d in data]
        lo_v, hi_v = value(lo), value(hi)
        lo_v, hi_v = (v.encode() if isinstance(v, str) else v for v in (lo_v, hi_v))
        if lo_exact == "true":
            assert min(data) == lo_v, name
        else:
            assert lo_v <= min(data), name
        if hi_exact == "true":
            assert max(data) == hi_v, name
        else:
            assert max(data) <= hi_v, name
    return "min/max of 6 columns agree with the README's statistics table"


def _check_bss_pairs(spark, path: Path) -> str:
    """README: each BYTE_STREAM_SPLIT column equals its PLAIN twin."""
    run = run_query_full(spark, _reader(path), LM_CONF)
    pairs = [(c, c.replace("_byte_stream_split", "_plain")) for c in run.columns if c.endswith("_byte_stream_split")]
    pairs = [(b, p) for b, p in pairs if p in run.columns]
    assert pairs
    for bss, plain in pairs:
        i, j = run.columns.index(bss), run.columns.index(plain)
        assert [r[i] for r in run.ordered] == [r[j] for r in run.ordered], bss
    return f"{len(pairs)} BYTE_STREAM_SPLIT columns equal their PLAIN twins"


def _check_readme_count(spark, path: Path) -> str:
    row = next(ln for ln in _readme().splitlines() if ln.startswith(f"| {path.name}"))
    n = int(re.search(r"(\d+) UINT64 numbers", row).group(1))
    got = _lm_rows(spark, path)
    assert len(got) == n
    return f"{n} rows, as the README says"


def _check_old_list_md(spark, path: Path) -> str:
    """old_list_structure.md: one row, a LIST<LIST<INT32>> in the legacy two-level layout, whose
    value it gives (e.g. ``[[1, 2], [3, 4]]``)."""
    text = (DATA / "old_list_structure.md").read_text()
    value = re.search(r"with a single value `(\[.*?\])`", text)
    assert value, "old_list_structure.md: the documented value was not found"
    expected = [tuple(tuple(int(v) for v in inner.split(",")) for inner in re.findall(r"\[([^\[\]]*)\]", value.group(1)))]
    got = [tuple(r[0]) for r in _lm_rows(spark, path)]
    assert got == expected, f"{got} read, {value.group(1)} documented"
    return f"1 row equal to the value in old_list_structure.md: {value.group(1)}"


def _documented() -> dict[str, Callable[[SparkSession, Path], str]]:
    checks = {}
    for csv_path in sorted(DATA.glob("*_expect.csv")):
        checks[csv_path.name.replace("_expect.csv", ".parquet")] = _check_expect_csv
    checks["int96_from_spark.parquet"] = _check_int96_md
    for md in sorted(DATA.glob("*.md")):
        if re.search(r"column index for column \S+:\s*\nBoundary order", md.read_text()):
            checks.setdefault(md.name.replace(".md", ".parquet"), _check_page_stats_md)
    checks["binary_truncated_min_max.parquet"] = _check_truncated_stats
    checks["byte_stream_split_extended.gzip.parquet"] = _check_bss_pairs
    checks["concatenated_gzip_members.parquet"] = _check_readme_count
    checks["old_list_structure.parquet"] = _check_old_list_md
    return {name: check for name, check in checks.items() if (DATA / name).is_file()}


DOCUMENTED = _documented()


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_corpus_documented_values(spark, name):
    """lmspark's answer (served or handed to Spark's reader) equals what the corpus documents."""
    try:
        print(DOCUMENTED[name](spark, DATA / name))
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001
        jvm_alive(spark)
        pytest.fail(f"lmspark fails: {error_summary(e)}")


# --------------------------------------------------------------------------------------------
# Page checksums (spark.lmspark.verifyChecksums)
# --------------------------------------------------------------------------------------------

VERIFY_CHECKSUMS = {"spark.lmspark.verifyChecksums": "true"}
CHECKSUM_FILES = {
    "plain-dict-uncompressed-checksum.parquet": "good",
    "rle-dict-snappy-checksum.parquet": "good",
    "rle-dict-uncompressed-corrupt-checksum.parquet": "corrupt",
}


@pytest.mark.parametrize("name", sorted(CHECKSUM_FILES))
def test_corpus_page_checksums(spark, name):
    """With checksums verified, pages with a correct CRC read as vanilla Spark reads them, by
    lmspark itself; a page with a wrong CRC is an error naming the file and the column."""
    path = DATA / name
    if not path.is_file():
        pytest.skip(f"{name} not in the corpus")
    read = _reader(path)
    if CHECKSUM_FILES[name] == "good":
        lm = run_query_full(spark, read, {**LM_CONF, **VERIFY_CHECKSUMS})
        assert lm.rows == run_query_full(spark, read, REFERENCE_CONF).rows
        assert_lm_read_everything(lm)
        return
    with pytest.raises(Exception) as failure:
        run_query_full(spark, read, {**LM_CONF, **VERIFY_CHECKSUMS})
    jvm_alive(spark)
    message = str(failure.value)
    assert re.search(r"crc|checksum", message, re.I), error_summary(failure.value)
    assert name in message, f"the error does not name the file: {error_summary(failure.value)}"
    assert re.search(r"long_field|binary_field", message), f"the error does not name the column: {error_summary(failure.value)}"


# --------------------------------------------------------------------------------------------
# The outcome table (keep this test last in the module: it reads what the others recorded)
# --------------------------------------------------------------------------------------------


def render_outcome_table(outcomes: dict[str, str]) -> str:
    kinds = Counter(o.split(":")[0] for o in outcomes.values())
    lines = [
        "# parquet-testing corpus: what lmspark does with each file",
        "",
        "Generated by `LMSPARK_WRITE_CORPUS_TABLE=1 pytest tests/test_corpus.py`; a normal run of",
        "`tests/test_corpus.py` fails when what it observes differs from this table.",
        "",
        "Outcomes: " + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())) + ".",
        "",
        "| file | outcome |",
        "|---|---|",
    ]
    lines += [f"| {rel} | {outcomes[rel]} |" for rel in sorted(outcomes)]
    return "\n".join(lines) + "\n"


def test_corpus_outcome_table():
    missing = [_rel(p) for p in FILES if _rel(p) not in OUTCOMES]
    if missing:
        pytest.skip(f"{len(missing)} corpus files did not run in this session (e.g. {missing[:3]}): "
                    "the outcome table is checked on a full run of tests/test_corpus.py only")
    observed = render_outcome_table(OUTCOMES)
    if os.environ.get(WRITE_TABLE_ENV):
        OUTCOME_TABLE.write_text(observed)
        print(f"wrote {OUTCOME_TABLE}")
        return
    committed = OUTCOME_TABLE.read_text() if OUTCOME_TABLE.is_file() else ""
    if committed != observed:
        diff = "".join(difflib.unified_diff(
            committed.splitlines(keepends=True), observed.splitlines(keepends=True),
            fromfile=f"{OUTCOME_TABLE.relative_to(REPO_ROOT)} (committed)", tofile="observed now",
        ))
        pytest.fail(
            "the corpus outcomes differ from the committed table:\n" + diff
            + f"\nIf the change is intended, regenerate the table with:\n  {WRITE_TABLE_ENV}=1 "
            "LMSPARK_JAR=<jar> .venv/bin/python -m pytest -q tests/test_corpus.py"
        )
