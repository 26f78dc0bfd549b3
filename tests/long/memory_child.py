"""One Spark session for ``test_memory.py``, run as a child process so that its driver JVM gets its
own heap (``spark.driver.memory``; in local mode the driver is the executor) and a GC log.

``python memory_child.py <file> <out.json> <lm|vanilla> <driver memory> [gc log]`` runs the
queries of ``test_memory.QUERIES`` on the Parquet file and writes, as JSON, each query's rows and,
with lmspark, the sum of each LmParquetScan metric over the query's scans (to show that lmspark
read the file). With a GC log, a full collection runs every few seconds during the queries, so
that the log shows the heap the scan holds live. Exits non-zero on any failure (an OutOfMemoryError included).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

os.environ["TZ"] = "UTC"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pyspark.sql import SparkSession  # noqa: E402

from memory_queries import QUERIES  # noqa: E402

#: Seconds between the full collections that sample the live heap (with a GC log).
SAMPLE_EVERY_S = 2.0


def lm_metrics(df) -> dict:
    """Sums of the LmParquetScanExec nodes' SQL metrics in the executed plan of ``df`` (adaptive
    execution is off, so the plan is walked through its children alone)."""
    sums: dict = {"scans": 0}
    stack = [df._jdf.queryExecution().executedPlan()]
    while stack:
        node = stack.pop()
        if node.getClass().getSimpleName() == "LmParquetScanExec":
            sums["scans"] += 1
            it = node.metrics().iterator()
            while it.hasNext():
                kv = it.next()
                sums[kv._1()] = sums.get(kv._1(), 0) + int(kv._2().value())
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))
    return sums


def main() -> None:
    path, out, mode, memory = sys.argv[1:5]
    gc_log = sys.argv[5] if len(sys.argv) > 5 else None
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(f"lmspark-memory-{mode}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", memory)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.adaptive.enabled", "false")
    )
    java_opts = "-Duser.timezone=UTC -XX:+ExitOnOutOfMemoryError"
    if gc_log:
        java_opts += f" -Xlog:gc:file={gc_log}"
    builder = builder.config("spark.driver.extraJavaOptions", java_opts)
    if mode == "lm":
        from lmspark import enable_lm

        builder = enable_lm(builder)
    spark = builder.getOrCreate()
    stop = threading.Event()
    sampler = None
    if gc_log:
        # A full collection every few seconds while the queries run: the heap left after each
        # (`Pause Full (System.gc())` in the GC log) is what the running scan holds live.
        def sample() -> None:
            system = spark._jvm.java.lang.System
            while not stop.wait(SAMPLE_EVERY_S):
                try:
                    system.gc()
                except Exception:  # noqa: BLE001 - the JVM is gone: nothing left to sample
                    return

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
    try:
        spark.read.parquet(path).createOrReplaceTempView("t")
        results = {}
        for name, sql in QUERIES.items():
            df = spark.sql(sql)
            rows = [list(r) for r in df.collect()]
            entry = {"rows": rows}
            if mode == "lm":
                entry["metrics"] = lm_metrics(df)
            results[name] = entry
        stop.set()
        if sampler is not None:
            sampler.join()
        rt = spark._jvm.java.lang.Runtime.getRuntime()
        results["_max_heap"] = int(rt.maxMemory())
        Path(out).write_text(json.dumps(results))
    finally:
        stop.set()
        spark.stop()


if __name__ == "__main__":
    main()
