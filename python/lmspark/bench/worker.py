"""Runs one engine's share of the benchmark in its own process: ``python -m lmspark.bench.worker PLAN``.

The plan (JSON) names the engine, the data sets and the (dataset, query) cells. For each cell the
worker runs the query once untimed (warm-up) and then ``runs`` timed times, and writes one JSON line
per run to its original stdout; everything else it or its JVM prints goes to stderr (the parent
sends that to a log file).

Timing is the wall time of the whole query, ``time.perf_counter()`` around
``spark.sql(q).write.format("noop").mode("overwrite").save()`` for Spark engines, and around
running the query and pulling every result batch as Arrow for DuckDB and DataFusion (batch by
batch, like the noop sink, so no engine has to hold a large result in memory).

For Spark engines a ``QueryExecutionListener`` (a py4j callback) hands back the executed plan of the
noop write, so the SQL metrics of its ``LmParquetScan`` nodes are read after the timed action.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import threading
import time
import traceback

_OUT = None  # the original stdout, for result lines


def emit(obj: dict) -> None:
    _OUT.write(json.dumps(obj) + "\n")
    _OUT.flush()


def _redirect_stdout() -> None:
    """Keep fd 1 for results only: the JVM and any library chatter goes to stderr."""
    global _OUT
    _OUT = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr


# --- Spark -------------------------------------------------------------------------------------


class _WriteListener:
    """py4j implementation of org.apache.spark.sql.util.QueryExecutionListener.

    Spark calls it asynchronously (on its listener bus) after each action; only the noop writes
    (whose logical plan is ``OverwriteByExpression``) are kept, in order.
    """

    def __init__(self):
        self.writes: list = []
        self.cv = threading.Condition()

    def _add(self, qe, error):
        try:
            name = qe.logical().getClass().getSimpleName()
        except Exception:  # noqa: BLE001
            name = "?"
        if name.startswith("OverwriteByExpression") or name.startswith("AppendData"):
            with self.cv:
                self.writes.append((qe, error))
                self.cv.notify_all()

    def onSuccess(self, funcName, qe, durationNs):  # noqa: N802, N803 - Java names
        self._add(qe, None)

    def onFailure(self, funcName, qe, exception):  # noqa: N802, N803
        self._add(qe, str(exception))

    def wait_for(self, n: int, timeout: float = 60.0):
        with self.cv:
            self.cv.wait_for(lambda: len(self.writes) > n, timeout=timeout)
            return self.writes[n] if len(self.writes) > n else (None, "no listener event")

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]


def _children(p):
    cls = p.getClass().getSimpleName()
    if cls == "AdaptiveSparkPlanExec":
        return [p.executedPlan()]
    if cls.endswith("QueryStageExec"):
        return [p.plan()]
    ch = p.children()
    return [ch.apply(i) for i in range(ch.size())]


def plan_scans(plan) -> tuple[list[str], dict[str, int], dict[str, str]]:
    """The scan node names in an executed plan, the summed metrics of its LmParquetScan nodes,
    and each metric's type (``sum``, ``size`` in bytes, ``timing`` in ms, ``nsTiming`` in ns)."""
    names: list[str] = []
    metrics: dict[str, int] = {}
    types: dict[str, str] = {}
    stack = [plan]
    while stack:
        p = stack.pop()
        name = p.nodeName().strip()
        if "Scan" in name and not name.startswith("WholeStage"):
            names.append(name)
            if name == "LmParquetScan":
                it = p.metrics().iterator()
                while it.hasNext():
                    kv = it.next()
                    key, val = kv._1(), kv._2().value()
                    metrics[key] = metrics.get(key, 0) + int(val)
                    types[key] = kv._2().metricType()
        stack.extend(_children(p))
    return names, metrics, types


_FALLBACK = re.compile(r"lmspark fallback: ([^\]]*)\]")


def run_spark(plan: dict) -> None:
    from pyspark.java_gateway import ensure_callback_server_started
    from pyspark.sql import SparkSession

    eng = plan["engine"]
    builder = SparkSession.builder.appName(f"lmspark-bench-{eng['name']}")
    for k, v in plan["spark_conf"].items():
        builder = builder.config(k, v)
    if eng["lmspark"]:
        from lmspark import enable_lm

        builder = enable_lm(builder)
    for k, v in eng["conf"].items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    gw = spark.sparkContext._gateway
    ensure_callback_server_started(gw)
    listener = _WriteListener()
    spark._jsparkSession.listenerManager().register(listener)
    emit({"type": "start", "engine": eng["name"], "versions": {"spark": spark.version}})

    def bind(ds: dict) -> None:
        if ds.get("format") == "delta":
            spark.read.format("delta").load(ds["path"]).createOrReplaceTempView(ds["table"])
        else:
            spark.read.parquet(ds["path"]).createOrReplaceTempView(ds["table"])

    store = None
    if plan.get("store") == "sim":
        store = spark._jvm.lmspark.testutil.SimulatedStore

    formats = {n: ds.get("format", "parquet") for n, ds in plan["datasets"].items()}

    def one(cell):
        """The cell's time, its query execution when it ran outside the listener's view, and the
        seconds to its executed plan then (Delta's planning reads the table's log and files)."""
        if store is not None:
            store.reset()
        t0 = time.perf_counter()
        if formats.get(cell["dataset"]) == "delta":
            # Delta (4.4 on Spark 4.2) cannot plan a write over a scan of a table with deletion
            # vectors ("non-pinned table snapshot"), so the query's rows are counted instead: every
            # row is produced, as a noop write consumes them, and no engine collects them.
            qe = spark.sql(cell["sql"])._jdf.queryExecution()
            qe.executedPlan()
            planned = time.perf_counter() - t0
            qe.toRdd().count()
            return time.perf_counter() - t0, qe, planned
        spark.sql(cell["sql"]).write.format("noop").mode("overwrite").save()
        return time.perf_counter() - t0, None, None

    def details(idx: int) -> dict:
        qe, err = listener.wait_for(idx)
        if qe is None:
            return {"note": f"metrics unavailable: {err}"}
        return details_of(qe)

    def details_of(qe) -> dict:
        try:
            executed = qe.executedPlan()
            names, metrics, types = plan_scans(executed)
            out = {"scan_nodes": ";".join(sorted(set(names))), "metrics": metrics, "metric_types": types}
            if eng["lmspark"]:
                out["lm_scan"] = "LmParquetScan" in names
                m = _FALLBACK.search(executed.toString())
                if m:
                    out["lm_fallback"] = m.group(1)[:300]
            return out
        except Exception as e:  # noqa: BLE001
            return {"note": f"metrics unavailable: {e}"}

    counter = {"writes": 0}

    def timed(cell):
        idx = counter["writes"]
        try:
            secs, qe, planned = one(cell)
            if qe is None:
                counter["writes"] += 1
            counted = {} if planned is None else {"plan_seconds": round(planned, 4)}
            if store is not None:
                # py4j hands a java.lang.Number (the counters are AtomicLongs) back as a Python int
                counted = {"store_requests": int(store.requests()),
                           "store_mb": round(int(store.bytes()) / 2**20, 3)}
        except Exception:
            # a write that failed may or may not have reached the listener: resynchronise
            time.sleep(2.0)
            counter["writes"] = len(listener.writes)
            raise
        return secs, {**(details(idx) if qe is None else details_of(qe)), **counted}

    _run_cells(plan, timed, bind)
    spark.stop()


# --- DuckDB / DataFusion -------------------------------------------------------------------------


def run_duckdb(plan: dict) -> None:
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads={int(plan['threads'])}")
    emit({"type": "start", "engine": plan["engine"]["name"], "versions": {"duckdb": duckdb.__version__}})
    def bind(ds: dict) -> None:
        con.execute(f"CREATE OR REPLACE VIEW {ds['table']} AS SELECT * FROM read_parquet('{ds['path']}/*.parquet')")

    def timed(cell):
        t0 = time.perf_counter()
        rows = 0
        for batch in con.sql(cell["sql"]).to_arrow_reader(1 << 17):
            rows += batch.num_rows
        return time.perf_counter() - t0, {"result_rows": rows}

    _run_cells(plan, timed, bind)
    con.close()


def run_datafusion(plan: dict) -> None:
    import datafusion

    cfg = (
        datafusion.SessionConfig()
        .with_target_partitions(int(plan["threads"]))
        .set("datafusion.execution.parquet.pushdown_filters", "true")
        .set("datafusion.execution.parquet.reorder_filters", "true")
    )
    ctx = datafusion.SessionContext(cfg)
    emit({"type": "start", "engine": plan["engine"]["name"], "versions": {"datafusion": datafusion.__version__}})
    def bind(ds: dict) -> None:
        if ctx.table_exist(ds["table"]):
            ctx.deregister_table(ds["table"])
        ctx.register_parquet(ds["table"], ds["path"])

    def timed(cell):
        t0 = time.perf_counter()
        rows = 0
        for batch in ctx.sql(cell["sql"]).execute_stream():
            rows += batch.to_pyarrow().num_rows
        return time.perf_counter() - t0, {"result_rows": rows}

    _run_cells(plan, timed, bind)


# --- the loop shared by every engine ----------------------------------------------------------


def _run_cells(plan: dict, timed, bind) -> None:
    """Warm-up and timed runs of every cell; ``bind(dataset)`` points the dataset's table name
    (``lineitem`` or ``wide``) at its files whenever the data set changes.

    With ``time_budget`` (seconds for this engine, 0 = none), each cell may use the engine's
    remaining time divided by its remaining cells: the warm-up and one timed run always happen
    (the warm-up only while the engine is within its budget), further timed runs only while the
    cell is within its share. Runs left out are reported with status ``skipped``.
    """
    runs = int(plan["runs"])
    warmups = int(plan.get("warmups", 1))
    budget = float(plan.get("time_budget") or 0)
    start = time.perf_counter()
    cells = plan["cells"]
    bound = None
    for i, cell in enumerate(cells):
        base = {"type": "run", "dataset": cell["dataset"], "query": cell["query"]}
        failed = False
        if cell["dataset"] != bound:
            bind(plan["datasets"][cell["dataset"]])
            bound = cell["dataset"]
        remaining = budget - (time.perf_counter() - start) if budget else float("inf")
        share = remaining / (len(cells) - i) if budget else float("inf")
        spent = 0.0
        for w in range(warmups):
            if remaining <= 0:
                emit({**base, "warmup": True, "run": -1 - w, "status": "skipped"})
                continue
            try:
                secs, _ = timed(cell)
                spent += secs
                emit({**base, "warmup": True, "run": -1 - w, "seconds": secs, "status": "ok"})
            except Exception as e:  # noqa: BLE001
                emit({**base, "warmup": True, "run": -1 - w, "status": "error", "error": _err(e)})
                failed = True
                break
        done = 0
        for r in range(runs):
            if failed:
                emit({**base, "run": r, "status": "error", "error": "failed in warm-up"})
                continue
            if done >= 1 and spent >= share:
                emit({**base, "run": r, "status": "skipped", "error": "time limit: the cell used its share"})
                continue
            try:
                secs, extra = timed(cell)
                spent += secs
                done += 1
                emit({**base, "run": r, "seconds": secs, "status": "ok", **(extra or {})})
            except Exception as e:  # noqa: BLE001
                emit({**base, "run": r, "status": "error", "error": _err(e)})
                failed = True
    emit({"type": "done"})


def _err(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    first = next((ln for ln in text if ln.strip()), type(e).__name__)
    return f"{type(e).__name__}: {first}"[:500]


def main(argv: list[str]) -> int:
    _redirect_stdout()
    with open(argv[0]) as f:
        plan = json.load(f)
    kind = plan["engine"]["kind"]
    try:
        {"spark": run_spark, "duckdb": run_duckdb, "datafusion": run_datafusion}[kind](plan)
    except BaseException as e:  # noqa: BLE001 - reported to the parent, then fail
        traceback.print_exc()
        emit({"type": "fatal", "error": _err(e), "python": platform.python_version()})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
