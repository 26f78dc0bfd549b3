"""``make profile``: the budget's sorting of profiler samples, and the whole command at a tiny scale.

The sorting tests build collapsed stacks as async-profiler's converter writes them and check which
budget line each lands on: a sample belongs to the deepest frame a line claims, inside the scan
only; shared helpers (run-length decoding, copies) go to their caller's line. The smoke test runs
``python -m lmspark.bench.profile`` on q6 at SF 0.01 for vanilla Spark and lmspark and checks the
files it writes and the figures' consistency (no timing is asserted).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lmspark.bench import budget

TASK = ("[Executor task launch worker tid=7];java/lang/Thread.run_[j];"
        "org/apache/spark/executor/Executor$TaskRunner.run_[j]")
BODY = TASK + ";org/apache/spark/scheduler/ResultTask.runTask_[j]"
SCAN = BODY + (";org/apache/spark/sql/execution/datasources/FileScanRDD$$anon$1.hasNext_[j]"
               ";lmspark/scan/FileBatchReader.hasNext_[j]")


def line_of(stack: str) -> str:
    s = budget.classify([f"{stack} 3"])
    hits = [k for k, v in {**s.task, **s.other}.items() if v]
    assert len(hits) == 1 and {**s.task, **s.other}[hits[0]] == 3, hits
    return hits[0]


@pytest.mark.parametrize("tail, line", [
    (";lmspark/io/PageDecompression.decompress_[j];org/xerial/snappy/SnappyNative.rawUncompress_[j];"
     "libsnappyjava.so;__memmove_avx_unaligned_erms", "decompression"),
    (";lmspark/io/FetchingStream.readFully_[j];sun/nio/ch/FileChannelImpl.read_[j];__GI_read", "I/O"),
    (";lmspark/meta/FooterReader.fileFooter_[j]", "footer and metadata"),
    (";lmspark/column/FlatColumnReader.read_[j];lmspark/decode/DictionaryIdsDecoder.readIds_[j];"
     "lmspark/decode/RleBitPackedDecoder.readInts_[j]", "values"),
    (";lmspark/column/NestedLeafReader.loadCurrentPage_[j];lmspark/decode/RleBitPackedDecoder.readInts_[j];"
     "java/util/Arrays.fill_[j]", "levels"),
    (";lmspark/scan/FilterFirstPass.narrow_[j];lmspark/predicate/VectorFilter.evaluateIds_[j]", "predicates"),
    (";lmspark/scan/FilterFirstPass.narrow_[j];java/util/Arrays.fill_[j]", "selection bookkeeping"),
    (";lmspark/scan/PredicateCache$Column.copyTo_[j];jlong_disjoint_arraycopy", "vector copies"),
    (";lmspark/scan/RowGroupPruner.decide_[j]", "scan setup and pruning"),
])
def test_scan_samples_go_to_the_deepest_line_that_claims_them(tail: str, line: str) -> None:
    assert line_of(SCAN + tail) == line


def test_samples_outside_the_scan() -> None:
    # Above the scan (Spark's generated code, the writer) but inside the task's body.
    assert line_of(BODY + ";org/apache/spark/sql/catalyst/expressions/GeneratedClass$X.processNext_[j]") \
        == "Spark operators above the scan"
    # The task's deserialization and teardown.
    assert line_of(TASK + ";org/apache/spark/serializer/JavaSerializerInstance.deserialize_[j]") \
        == "task launch and teardown"
    # A decompressor name outside the scan (e.g. a shuffle's codec) is not the scan's decompression.
    assert line_of(BODY + ";org/xerial/snappy/Snappy.uncompress_[j]") == "Spark operators above the scan"


def test_other_threads() -> None:
    assert line_of("[C2 CompilerThre tid=3];__clone;thread_native_entry") == "JIT compilers"
    assert line_of("[GC Thread#1 tid=4];__clone") == "garbage collector"
    assert line_of("[Thread-4 tid=5];org/apache/spark/sql/execution/QueryExecution.executedPlan_[j]") \
        == "driver: planning"
    assert line_of("[dag-scheduler-event-loop tid=6];org/apache/spark/scheduler/DAGScheduler.submitStage_[j]") \
        == "driver: scheduling"
    assert line_of("[process reaper tid=9];java/lang/Thread.run_[j]") == "other JVM threads"


def test_bounds_follow_the_scan_counts() -> None:
    m = {"lmBytesDecompressed": 2_160_000_000, "lmValuesDecoded": 4_000_000_000, "lmRowsScanned": 1_000_000_000}
    b = budget.bounds(m, "SNAPPY", memory_gbps=8.0)
    assert b["decompression"] == pytest.approx(2.0)  # at 1.08 GB/s
    assert b["values"] == pytest.approx(4.0)  # 32 GB at 8 GB/s
    assert b["levels"] == pytest.approx(2.0)  # at 2G a second
    assert b["predicates"] == pytest.approx(1.0)
    assert "decompression" not in budget.bounds(m, "UNCOMPRESSED", 8.0)
    assert budget.bounds({}, "SNAPPY", 8.0) == {}


def test_profile_smoke(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import lmspark

    out = tmp_path / "profiles"
    env = dict(os.environ, LMSPARK_JAR=lmspark.jar_path(), PYSPARK_PYTHON=sys.executable)
    cmd = [sys.executable, "-m", "lmspark.bench.profile", "--query", "q6", "--scale", "0.01", "--runs", "2",
           "--warmups", "1", "--output", str(out), "--cache-dir", str(tmp_path / "cache")]
    # A hang guard, not a timing check.
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    assert p.returncode == 0, f"profile failed:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"
    for name in ("q6.md", "q6.json", "q6-vanilla.html", "q6-lmspark.html"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert "<html" in (out / "q6-lmspark.html").read_text()[:2000].lower()
    result = json.loads((out / "q6.json").read_text())
    md = (out / "q6.md").read_text()
    for engine in ("vanilla", "lmspark"):
        assert f"### {engine}" in md
        e = result["engines"][engine]
        assert len(e["runs"]) == 2
        for run in e["runs"]:
            assert run["wall_s"] > 0 and run["tasks"] >= 1
            assert 0 < run["planning_s"] < run["wall_s"]
            assert run["run_s"] <= run["tasks"] * run["wall_s"]
        assert sum(e["samples"]["task"].values()) + sum(e["samples"]["other"].values()) > 0
    lm = result["engines"]["lmspark"]
    assert lm["runs"][-1]["metrics"]["lmBytesDecompressed"] > 0
    assert result["codec"] == "SNAPPY" and lm["bounds"]["decompression"] > 0
    for line in budget.TASK_ORDER + budget.OTHER_ORDER:
        assert line in md
