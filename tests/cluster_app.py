"""The driver program of ``test_cluster.py``: runs the differential queries on a standalone cluster.

PySpark allows one SparkContext per Python process and the other suites share a ``local[2]``
session, so the cluster's driver runs here, in a child process that ``test_cluster.py`` starts:

    python tests/cluster_app.py SPEC.json RESULT.json

``SPEC.json`` names the master URL, the Parquet folders (registered as temp views) and the queries
``[name, sql]``. Each query runs twice in one session built with ``lmspark.enable_lm`` (so the jar
reaches the executors only through ``spark.jars``): with lmspark on, then as the reference (lmspark
off, Parquet filter pushdown off). ``RESULT.json`` records per query whether the row multisets are
equal (with a description of the difference if not), the lmspark plan's status, the summed metrics
of its ``LmParquetScanExec`` nodes, and which executors ran the tasks of the lmspark run's stages
(from the driver's REST API); plus the application's executors and their completed task counts.
This module asserts nothing: the test does.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pyspark.sql import SparkSession  # noqa: E402

from conftest import (  # noqa: E402
    LM_CONF,
    LM_NODE,
    REFERENCE_CONF,
    describe_difference,
    fallback_reasons,
    lm_status,
    run_query_full,
)
import lmspark  # noqa: E402
from lmspark import enable_lm  # noqa: E402


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read().decode())


def _all_lm_metrics(df) -> dict[str, int]:
    """Every metric of every LmParquetScanExec in the executed plan, summed by name (``scans``: how
    many lmspark scans), through ``lmspark.metrics``."""
    out = lmspark.metrics(df)
    out.setdefault("scans", 0)
    return out


def _stage_executors(spark: SparkSession, group: str) -> dict[str, int]:
    """Executor id -> tasks of the stages of the jobs in ``group`` that it completed."""
    sc = spark.sparkContext
    base = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}"
    tracker = sc.statusTracker()
    stage_ids = set()
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        if info is not None:
            stage_ids.update(info.stageIds)
    out: dict[str, int] = {}
    for sid in sorted(stage_ids):
        # the status store is fed by the listener bus: give it a moment to catch up
        for _ in range(50):
            try:
                attempts = _get_json(f"{base}/stages/{sid}?details=true&taskStatus=SUCCESS")
            except Exception:  # noqa: BLE001 - a skipped stage has no data
                attempts = []
            if not attempts or all(a.get("status") in ("COMPLETE", "SKIPPED") for a in attempts):
                break
            time.sleep(0.1)
        for a in attempts:
            for ex, summary in (a.get("executorSummary") or {}).items():
                out[ex] = out.get(ex, 0) + int(summary.get("succeededTasks", 0))
    return out


def main(spec_path: str, result_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    builder = (
        SparkSession.builder.master(spec["master"])
        .appName("lmspark-cluster-test")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .config("spark.executor.memory", spec.get("executor_memory", "640m"))
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", str(spec["workers"]))
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", "0")  # a free port; the REST API tells which executor ran what
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.sql.maxMetadataStringLength", "2000")
        .config("spark.sql.warehouse.dir", spec["warehouse"])
        # one file per task at most, so that every executor gets scan tasks
        .config("spark.sql.files.maxPartitionBytes", str(spec.get("max_partition_bytes", 64 * 1024)))
        .config("spark.sql.files.openCostInBytes", "1")
    )
    spark = enable_lm(builder).getOrCreate()
    result: dict = {"jars": spark.conf.get("spark.jars", ""), "queries": {}}
    try:
        spark.sparkContext.setLogLevel("WARN")
        # wait until both executors registered, so the first query's tasks can spread
        deadline = time.time() + 120
        jsc = spark.sparkContext._jsc.sc()
        while jsc.getExecutorMemoryStatus().size() < spec["workers"] + 1 and time.time() < deadline:
            time.sleep(0.5)
        for view, folder in spec["views"].items():
            spark.read.parquet(folder).createOrReplaceTempView(view)
        sc = spark.sparkContext
        for name, sql in spec["queries"]:
            group = f"lm-{name}"
            sc.setJobGroup(group, f"lmspark run of {name}")
            try:
                lm = run_query_full(spark, sql, LM_CONF)
                metrics = _all_lm_metrics(lm._df)
            finally:
                sc.setJobGroup("reference", "reference runs")
            ref = run_query_full(spark, sql, REFERENCE_CONF)
            result["queries"][name] = {
                "sql": sql,
                "same": lm.rows == ref.rows and lm.columns == ref.columns,
                "rows": len(ref.ordered),
                "difference": "" if lm.rows == ref.rows else describe_difference(lm.rows, ref.rows),
                "columns": [lm.columns, ref.columns],
                "lm_status": lm_status(lm.plan),
                "lm_node": LM_NODE in lm.plan,
                "fallback_reasons": fallback_reasons(lm.plan),
                "ref_uses_lm": LM_NODE in ref.plan,
                "metrics": metrics,
                "executors": _stage_executors(spark, group),
                "plan": lm.plan[:4000],
            }
        base = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}"
        result["app_executors"] = {
            e["id"]: {"hostPort": e["hostPort"], "completedTasks": e["completedTasks"]}
            for e in _get_json(f"{base}/allexecutors")
        }
    finally:
        Path(result_path).write_text(json.dumps(result, indent=1))
        spark.stop()


if __name__ == "__main__":
    os.environ.setdefault("TZ", "UTC")
    main(sys.argv[1], sys.argv[2])
