"""Memory per task is bounded by the batch size and the predicate cache, not by the row-group size
(issue 8). Long: run by ``make test-long`` (``make test-memory``), skipped otherwise.

A file of 8M-row row groups, each holding more than 1 GiB of column chunk bytes (more than the
whole heap below), is read by lmspark in a Spark session whose driver (the executor, in local mode,
with two tasks at once) has ``spark.driver.memory=1g``: every column of every row, a selective
filter, a dense filter and a count. Each answer must equal vanilla Spark's on the same file,
computed in a separate session with a larger heap (vanilla Spark reads a row group's chunks whole).
The lmspark session's GC log gives the heap figures, printed (run with ``-s`` to see them): the
peak heap used (when a collection started), and the most the scan held live, sampled by a full
collection every few seconds during the queries; the latter must stay well below one row group's
chunk bytes.

``LMSPARK_MEMORY_CONTRAST_JAR=<jar>`` also runs the lmspark session with that jar (e.g. one built
before the bounded page windows) and prints what happened; it asserts nothing about it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from memory_queries import COLUMNS, DOUBLES, LONGS, QUERIES, ROW_GROUPS, ROWS_PER_GROUP  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("LMSPARK_LONG") != "1", reason="long test: run it with `make test-long` (LMSPARK_LONG=1)"
)

REPO_ROOT = HERE.parents[1]
CACHE = REPO_ROOT / ".cache" / "long"
CHILD = HERE / "memory_child.py"
SEED = 20261122
CHILD_TIMEOUT_S = 1800
GiB = 1 << 30
MiB = 1 << 20


def _generate(path: Path) -> None:
    """Writes the file with pyarrow, one row group at a time (seeded)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED)
    fields = [pa.field(c, pa.int64(), nullable=False) for c in COLUMNS[:LONGS]]
    fields += [pa.field(c, pa.float64(), nullable=False) for c in COLUMNS[LONGS : LONGS + DOUBLES]]
    fields += [pa.field("s", pa.string(), nullable=False)]
    schema = pa.schema(fields)
    tmp = path.with_suffix(".tmp")
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    with pq.ParquetWriter(tmp, schema, compression="snappy") as writer:
        for _ in range(ROW_GROUPS):
            n = ROWS_PER_GROUP
            arrays = [pa.array(rng.integers(lo, hi, size=n, dtype=np.int64, endpoint=True)) for _ in range(LONGS)]
            arrays += [pa.array(rng.random(n)) for _ in range(DOUBLES)]
            arrays.append(pc.cast(pa.array(rng.integers(lo, hi, size=n, dtype=np.int64, endpoint=True)), pa.string()))
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema), row_group_size=n)
            del arrays
    tmp.rename(path)


@pytest.fixture(scope="module")
def big_file() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"memory-{ROW_GROUPS}x{ROWS_PER_GROUP}-{SEED}.parquet"
    if not path.exists():
        _generate(path)
    return path


def _row_group_bytes(path: Path) -> list[int]:
    import pyarrow.parquet as pq

    md = pq.ParquetFile(path).metadata
    assert md.num_row_groups == ROW_GROUPS
    out = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        assert rg.num_rows == ROWS_PER_GROUP
        out.append(sum(rg.column(c).total_compressed_size for c in range(rg.num_columns)))
    return out


_GC_LINE = re.compile(r"GC\(\d+\) Pause .*?(\d+)([KMG])->(\d+)([KMG])\((\d+)([KMG])\)")
_UNIT = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _heap_figures(gc_log: Path) -> dict:
    """From a `-Xlog:gc` log: pauses, the largest heap in use when a pause started (the peak heap
    used), and over the sampling full collections (`System.gc()`, run every few seconds during the
    queries) their number and the largest heap left after one (the most the scan held live)."""
    before, live, pauses, samples = 0, 0, 0, 0
    for line in gc_log.read_text().splitlines():
        m = _GC_LINE.search(line)
        if m:
            pauses += 1
            before = max(before, int(m.group(1)) * _UNIT[m.group(2)])
            if "Pause Full (System.gc())" in line:
                samples += 1
                live = max(live, int(m.group(3)) * _UNIT[m.group(4)])
    return {"pauses": pauses, "peak_used": before, "samples": samples, "peak_live": live}


def _run_child(path: Path, mode: str, memory: str, tmp: Path, name: str, jar: str | None = None):
    out = tmp / f"{name}.json"
    gc_log = tmp / f"{name}-gc.log"
    env = dict(os.environ)
    if jar:
        env["LMSPARK_JAR"] = jar
    args = [sys.executable, str(CHILD), str(path), str(out), mode, memory, str(gc_log)]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    result = json.loads(out.read_text()) if proc.returncode == 0 and out.exists() else None
    heap = _heap_figures(gc_log) if gc_log.exists() else {}
    return proc, result, heap


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _fmt(heap: dict) -> str:
    if not heap:
        return "no GC log"
    return (f"{heap['pauses']} GC pauses, peak heap used {heap['peak_used'] / MiB:.0f} MiB; "
            f"{heap['samples']} full collections during the queries, largest live heap after one "
            f"{heap['peak_live'] / MiB:.0f} MiB")


def test_lmspark_reads_1gib_row_groups_with_a_1g_heap(big_file: Path, tmp_path: Path) -> None:
    group_bytes = _row_group_bytes(big_file)
    assert min(group_bytes) > GiB, f"each row group should hold more than 1 GiB of chunk bytes: {group_bytes}"

    # The reference depends only on the file and the queries: it is computed once and kept beside the file.
    key = hashlib.sha256(json.dumps(QUERIES, sort_keys=True).encode()).hexdigest()[:12]
    cached = CACHE / f"{big_file.stem}-vanilla-{key}.json"
    if cached.exists():
        reference = json.loads(cached.read_text())
    else:
        proc, reference, _ = _run_child(big_file, "vanilla", "6g", tmp_path, "vanilla")
        assert reference is not None, f"the vanilla reference run failed:\n{_tail(proc.stderr)}"
        cached.write_text(json.dumps(reference))

    proc, lm, heap = _run_child(big_file, "lm", "1g", tmp_path, "lm")
    assert lm is not None, (
        f"lmspark failed with spark.driver.memory=1g (rc {proc.returncode}; {_fmt(heap)}):\n"
        f"{_tail(proc.stdout, 5)}\n{_tail(proc.stderr)}"
    )
    print(f"\nmemory test: row groups of {[b // MiB for b in group_bytes]} MiB of chunk bytes; lmspark with a "
          f"{lm['_max_heap'] / MiB:.0f} MiB heap: {_fmt(heap)}")
    assert lm["_max_heap"] <= GiB + 64 * MiB, "the lmspark session's heap is not the 1g asked for"

    for name in QUERIES:
        assert lm[name]["rows"] == reference[name]["rows"], f"{name}: lmspark {lm[name]['rows']} vs vanilla {reference[name]['rows']}"
        metrics = lm[name]["metrics"]
        assert metrics["scans"] >= 1 and metrics.get("lmFilesRead", 0) >= 1, f"{name}: lmspark did not read the file: {metrics}"
        if name != "count":
            assert metrics.get("rowGroupsRead", 0) == ROW_GROUPS, f"{name}: {metrics}"
    # What the scan holds live is bounded by the batch, the page windows and the predicate cache:
    # far below one row group's chunk bytes (which alone exceed the heap).
    assert heap["samples"] > 0, _fmt(heap)
    assert heap["peak_live"] < min(group_bytes) / 2, _fmt(heap)

    contrast = os.environ.get("LMSPARK_MEMORY_CONTRAST_JAR")
    if contrast:
        proc, other, other_heap = _run_child(big_file, "lm", "1g", tmp_path, "contrast", jar=contrast)
        if other is None:
            oom = "OutOfMemoryError" in proc.stdout + proc.stderr
            print(f"contrast jar {contrast}: failed (rc {proc.returncode}{', OutOfMemoryError' if oom else ''}); "
                  f"{_fmt(other_heap)}\n{_tail(proc.stderr, 8)}")
        else:
            same = all(other[q]["rows"] == reference[q]["rows"] for q in QUERIES)
            print(f"contrast jar {contrast}: completed, answers {'equal' if same else 'DIFFER'}; {_fmt(other_heap)}")
