"""The benchmark's driver: data, one subprocess per engine, results.

``python -m lmspark.bench`` (``make bench``) generates the data once (``data.py``), runs every
(dataset, query) cell on every engine (``engines.py``, ``worker.py``), and writes
``<output>/<date>-sf<N>.csv``, ``<date>-sf<N>.md`` and the charts ``<date>-sf<N>-ratios.png`` and
``<date>-sf<N>-selectivity.png``. Worker logs go to ``<cache>/logs/``.

Time limit. The default run (SF 10, every engine, 5 timed runs after 1 untimed warm-up per
query) has to fit in 60 minutes on 2 cores. Measured at SF 1 and scaled up, 6 executions of every
query on every Spark engine would take several hours at SF 10 (a full ``select *`` of the 20M-row,
40-column ``wide`` table alone takes tens of seconds per execution on Spark), so the run keeps to
``--time-limit`` minutes (default 60, 0 = no limit), data generation included:

- before each engine starts, the time left is shared among the engines still to run (a Spark
  engine weighs 1, DuckDB and DataFusion 0.25 each, since they are much faster), and time an
  engine leaves unused goes to the ones after it;
- inside an engine, each query gets the engine's remaining time divided by its remaining
  queries. Its warm-up and first timed run always happen; further timed runs (up to ``--runs``)
  only while the query is within its share. Fast queries get all their runs; slow ones get fewer
  (their median is then over fewer runs). Runs left out are CSV rows with status ``skipped``,
  and the summary lists them. If an engine is already past its share, its remaining queries skip
  their warm-up and run once.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import data, engines as engines_mod, queries, report


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m lmspark.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=float, default=10.0, help="TPC-H scale factor; wide has 2M x scale rows (default 10)")
    p.add_argument("--engines", nargs="+", metavar="NAME",
                   help="engines (names or globs); default all: " + ", ".join(e.name for e in engines_mod.all_engines()))
    p.add_argument("--queries", nargs="+", metavar="NAME", help="queries (names or globs, e.g. 'q*' 'sel_random_*'); default all")
    p.add_argument("--datasets", nargs="+", choices=data.DATASETS, help="data sets; default all but lineitem_delta (Delta Lake, on a line with a Delta release)")
    p.add_argument("--runs", type=int, default=5, help="timed runs per query; the median is reported (default 5)")
    p.add_argument("--warmups", type=int, default=1, help="untimed runs before the timed ones (default 1)")
    p.add_argument("--time-limit", type=float, default=60.0,
                   help="minutes for the whole run, data generation included; slow queries get fewer "
                        "timed runs to keep to it (at least one each); 0 = no limit (default 60)")
    p.add_argument("--output", type=Path, default=None, help="results folder (default benchmarks/results)")
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="data and Comet jar cache (default $LMSPARK_CACHE/bench or .cache/bench in the repo)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--spark-line", default=None, metavar="LINE",
                   help="the Spark line to run on (3.5, 4.0, 4.1, 4.2, 4.3): the benchmark re-runs itself under "
                        ".cache/venv-spark<LINE> (made by `make venv LINE=<LINE>`, with that line's jar from "
                        "`make jar LINE=<LINE>`); default the installed pyspark's line")
    p.add_argument("--store", choices=("local", "sim"), default="local",
                   help="where the Spark engines read the files: the local disk, or a simulated object store "
                        "(every request pays --store-latency-ms, its bytes --store-mbps; vectored reads run in "
                        "parallel, as S3A's do; needs `make jar-tests`); requests and bytes per query are "
                        "recorded. DuckDB and DataFusion read the local disk only, so they are left out of sim runs")
    p.add_argument("--store-latency-ms", type=float, default=20.0, help="simulated store: latency per request (default 20)")
    p.add_argument("--store-mbps", type=float, default=100.0, help="simulated store: MB/s per request (default 100)")
    a = p.parse_args(argv)
    if a.runs < 1:
        p.error("--runs must be at least 1")
    return a


class _Progress:
    def __init__(self, total: int, enabled: bool):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, file=sys.stderr, unit="run", dynamic_ncols=True, smoothing=0.05)
            except ImportError:
                self.bar = None
        self.total, self.n, self.enabled = total, 0, enabled

    def desc(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_description(text[:60])
        elif self.enabled:
            print(f"[{self.n}/{self.total}] {text}", file=sys.stderr, flush=True)

    def update(self, k: int = 1) -> None:
        self.n += k
        if self.bar is not None:
            self.bar.update(k)

    def write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def machine_info() -> dict[str, str]:
    info = {"os": platform.platform(), "python": platform.python_version(), "cores": str(os.cpu_count())}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory"] = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    try:
        p = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        info["java"] = (p.stderr or p.stdout).splitlines()[0].strip()
    except Exception:  # noqa: BLE001
        info["java"] = "unknown"
    try:
        info["git"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                     cwd=Path(__file__).parent, timeout=30).stdout.strip() or "unknown"
    except Exception:  # noqa: BLE001
        info["git"] = "unknown"
    return info


def _versions() -> dict[str, str]:
    out = {}
    for mod in ("pyspark", "duckdb", "datafusion", "pyarrow"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            out[mod] = "not installed"
    from .. import __version__

    out["lmspark"] = __version__
    return out


def run_engine(eng, plan: dict, workdir: Path, log_path: Path, progress: _Progress, expected: int):
    """Runs one engine's worker; returns (run lines, fatal error or None, versions)."""
    plan_path = workdir / f"plan-{eng.name}.json"
    plan_path.write_text(json.dumps(plan))
    env = dict(os.environ)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    lines: list[dict] = []
    versions: dict = {}
    fatal = None
    seen = 0
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "lmspark.bench.worker", str(plan_path)],
                                stdout=subprocess.PIPE, stderr=log, text=True, env=env)
        assert proc.stdout is not None
        for raw in proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            t = msg.get("type")
            if t == "start":
                versions = msg.get("versions", {})
            elif t == "run":
                seen += 1
                progress.update()
                progress.desc(f"{eng.name}: {msg['dataset']}/{msg['query']}")
                if msg.get("status") == "error" and not msg.get("warmup"):
                    progress.write(f"  {eng.name} {msg['dataset']}/{msg['query']} run {msg['run']}: {msg.get('error')}")
                lines.append(msg)
            elif t == "fatal":
                fatal = msg.get("error")
        rc = proc.wait()
    if rc != 0 and fatal is None:
        fatal = f"worker exited with code {rc}; last log lines: " + " | ".join(_tail(log_path, 5))
    if seen < expected:
        progress.update(expected - seen)
    return lines, fatal, versions


def _tail(path: Path, n: int) -> list[str]:
    try:
        return [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()][-n:]
    except OSError:
        return []


def _installed_line() -> str:
    import pyspark

    return ".".join(pyspark.__version__.split(".")[:2])


def _reexec_on_line(line: str, argv: list[str]) -> int:
    """Runs this benchmark under the Python of the line's virtualenv; its exit code."""
    py = data._repo_root() / ".cache" / f"venv-spark{line}" / "bin" / "python"
    if not py.is_file():
        raise SystemExit(f"no virtualenv for Spark {line} at {py.parent.parent}: run `make venv jar LINE={line}`")
    return subprocess.run([str(py), "-m", "lmspark.bench", *argv], cwd=data._repo_root()).returncode


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    a = parse_args(argv)
    if a.spark_line and a.spark_line != _installed_line():
        return _reexec_on_line(a.spark_line, argv)
    line = _installed_line()
    started = time.perf_counter()
    cache = (a.cache_dir or data.default_cache_dir()).resolve()
    out_dir = (a.output or (data._repo_root() / "benchmarks" / "results")).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    logs = cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    today = _dt.date.today().isoformat()
    stem = f"{today}-sf{data.scale_tag(a.scale)}-spark{line}"
    if a.store == "sim":
        stem += f"-store{a.store_latency_ms:g}ms"
    command = "python -m lmspark.bench" + ("" if not argv else " " + " ".join(shlex.quote(x) for x in argv))

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    engines = engines_mod.select(a.engines)
    datasets = list(a.datasets or data.DEFAULT_DATASETS)
    cells = queries.plan(datasets, a.queries, a.scale)
    if not cells:
        raise SystemExit("no query matches --queries " + " ".join(a.queries or []))
    datasets = list(dict.fromkeys(c.dataset for c in cells))

    # What each engine needs before it can run.
    unavailable: dict[str, str] = {}
    comet_jar = comet_err = None
    if any(e.comet for e in engines):
        log("fetching the Comet jar (once) ...")
        comet_jar, comet_err = engines_mod.ensure_comet_jar(cache)
    store_conf: dict[str, str] = {}
    if a.store == "sim":
        tests_jar = data.tests_jar(line)
        for e in engines:
            if e.kind != "spark":
                unavailable[e.name] = "reads the local disk only; left out of simulated-store runs"
            elif not tests_jar.is_file():
                unavailable[e.name] = f"no {tests_jar.name}: run `make jar-tests LINE={line}`"
        store_conf = {
            "spark.driver.extraClassPath": str(tests_jar),
            "spark.hadoop.fs.simstore.impl": "lmspark.testutil.SimulatedStoreFileSystem",
            "spark.hadoop.fs.simstore.impl.disable.cache": "true",
            "spark.hadoop.lmspark.sim.latencyMs": str(a.store_latency_ms),
            "spark.hadoop.lmspark.sim.mbPerSec": str(a.store_mbps),
        }
    delta_conf: dict[str, str] = {}
    if "lineitem_delta" in datasets:
        from . import delta

        try:
            delta_conf = delta.session_conf(line)
        except FileNotFoundError as e:
            raise SystemExit(str(e))
        for e in engines:
            if e.kind != "spark":
                unavailable[e.name] = "reads no Delta table here; left out of runs with lineitem_delta"
    lm_jar = lm_err = None
    if any(e.lmspark for e in engines):
        try:
            from .. import jar_path

            lm_jar = jar_path()
        except FileNotFoundError as e:
            lm_err = str(e)
    for e in engines:
        if e.comet and comet_err:
            unavailable[e.name] = comet_err
        if e.lmspark and lm_err:
            unavailable[e.name] = lm_err

    t0 = time.perf_counter()
    ds_objs = data.ensure_datasets(datasets, a.scale, cache, log=log)
    datagen_s = time.perf_counter() - t0
    ds_info = {n: data.describe(d) for n, d in ds_objs.items()}

    runnable = [e for e in engines if e.name not in unavailable]
    per_engine = len(cells) * (a.runs + a.warmups)
    progress = _Progress(per_engine * len(runnable), not a.no_progress)
    rows: list[dict] = []
    metric_types: dict[str, str] = {}
    versions: dict[str, str] = {}
    engine_seconds: dict[str, float] = {}
    deadline = started + a.time_limit * 60 if a.time_limit else None
    weight = {"spark": 1.0, "duckdb": 0.25, "datafusion": 0.25}
    with tempfile.TemporaryDirectory(prefix="lmspark-bench-") as tmp:
        for k, eng in enumerate(runnable):
            budget = 0.0
            if deadline is not None:
                left = deadline - time.perf_counter() - 15.0  # reserve for the report
                w = sum(weight[e.kind] for e in runnable[k:])
                budget = max(1.0, left * weight[eng.kind] / w)
            spark_conf = dict(engines_mod.SPARK_COMMON)
            spark_conf.update(store_conf)
            spark_conf.update(delta_conf)
            if eng.comet:
                spark_conf.update(engines_mod.comet_conf(comet_jar))
            plan = {
                "engine": eng.to_json(),
                "spark_conf": spark_conf,
                "threads": engines_mod.NATIVE_THREADS,
                "datasets": {n: {"path": ("simstore://" if store_conf else "") + str(d.path), "table": d.table,
                                 "format": "delta" if n == "lineitem_delta" else "parquet"}
                             for n, d in ds_objs.items()},
                "store": a.store,
                "cells": [{"dataset": c.dataset, "query": c.query, "sql": c.sql_for(eng.kind)} for c in cells],
                "runs": a.runs,
                "warmups": a.warmups,
                "time_budget": budget,
            }
            progress.desc(f"{eng.name}: starting")
            te = time.perf_counter()
            lines, fatal, vers = run_engine(eng, plan, Path(tmp), logs / f"{stem}-{eng.name}.log", progress, per_engine)
            engine_seconds[eng.name] = time.perf_counter() - te
            versions.update(vers)
            timed = [m for m in lines if not m.get("warmup")]
            if fatal and not any(m.get("status") == "ok" for m in timed):
                unavailable[eng.name] = fatal
                progress.write(f"engine {eng.name} could not run: {fatal}")
                continue
            if fatal:
                progress.write(f"engine {eng.name} stopped early: {fatal}")
            for m in timed:
                row = {
                    "date": today, "spark_line": line, "scale": data.scale_tag(a.scale), "dataset": m["dataset"], "query": m["query"],
                    "engine": eng.name, "run": m["run"], "status": m.get("status"), "seconds": m.get("seconds"),
                    "error": m.get("error") or m.get("note"), "scan_nodes": m.get("scan_nodes"),
                    "result_rows": m.get("result_rows"), "plan_seconds": m.get("plan_seconds"),
                }
                if a.store == "sim":
                    row["store_requests"] = m.get("store_requests")
                    row["store_mb"] = m.get("store_mb")
                if eng.lmspark:
                    row["lm_scan"] = m.get("lm_scan")
                    row["lm_fallback"] = m.get("lm_fallback")
                for k, v in (m.get("metrics") or {}).items():
                    row[f"m_{k}"] = v
                metric_types.update(m.get("metric_types") or {})
                rows.append(row)
            if fatal:
                unavailable.setdefault(eng.name + " (partly)", fatal)
    progress.close()
    total_s = time.perf_counter() - started

    csv_path = out_dir / f"{stem}.csv"
    report.write_csv(rows, csv_path)
    ran = [e.name for e in engines if any(r["engine"] == e.name for r in rows)]
    cell_keys = [(c.dataset, c.query) for c in cells]
    title = f"lmspark benchmark, SF {data.scale_tag(a.scale)}, Spark {line}, {today}"
    if a.store == "sim":
        title += f", simulated store {a.store_latency_ms:g} ms + {a.store_mbps:g} MB/s"
    charts = []
    if report.chart_ratios(rows, ran, cell_keys, out_dir / f"{stem}-ratios.png", title + ": ratio to vanilla Spark"):
        charts.append(f"{stem}-ratios.png")
    if a.store == "sim" and report.chart_requests(rows, ran, cell_keys, out_dir / f"{stem}-requests.png",
                                                  title + ": requests per query"):
        charts.append(f"{stem}-requests.png")
    if report.chart_selectivity(rows, ran, out_dir / f"{stem}-selectivity.png", title + ": selectivity sweep on wide"):
        charts.append(f"{stem}-selectivity.png")

    md = _summary_md(
        a=a, command=command, today=today, engines=engines, ran=ran, unavailable=unavailable, rows=rows,
        cells=cell_keys, ds_info=ds_info, versions={**_versions(), **versions}, metric_types=metric_types,
        charts=charts, csv_name=csv_path.name, datagen_s=datagen_s, total_s=total_s,
        engine_seconds=engine_seconds, lm_jar=lm_jar, comet_jar=comet_jar,
    )
    md_path = out_dir / f"{stem}.md"
    md_path.write_text(md)
    table = report.summary_table(rows, ran, cell_keys)
    print(table)
    print(f"\nwrote {csv_path}, {md_path}" + "".join(f", {out_dir / c}" for c in charts) + f" in {total_s / 60:.1f} min",
          file=sys.stderr)
    return 0


def _summary_md(*, a, command, today, engines, ran, unavailable, rows, cells, ds_info, versions, metric_types,
                charts, csv_name, datagen_s, total_s, engine_seconds, lm_jar, comet_jar) -> str:
    m = machine_info()
    import pyspark

    out = [f"# lmspark benchmark: SF {data.scale_tag(a.scale)}, Spark {_installed_line()} (pyspark {pyspark.__version__}), {today}", ""]
    out += [
        "Median wall time in seconds of each query over its timed runs, and each engine's time divided by "
        "vanilla Spark's (below 1 is faster than vanilla Spark). `†`: lmspark's scan was not used "
        "(fallback to Spark's scan); `✗`: the query failed. Raw runs: "
        f"[`{csv_name}`]({csv_name}).",
        "",
        report.summary_table(rows, ran, cells),
        "",
        "## Geometric mean of the ratio to vanilla Spark, per data set",
        "",
        report.geomean_table(rows, ran, cells),
        "",
    ]
    if a.store == "sim":
        out += [
            f"## Requests to the simulated store ({a.store_latency_ms:g} ms per request, {a.store_mbps:g} MB/s)",
            "",
            "Median requests and MB read per query, counted by the store (every ranged read it served).",
            "",
            report.requests_table(rows, ran, cells),
            "",
        ]
    planning = report.planning_table(rows, ran, cells)
    if planning:
        out += [
            "## Planning",
            "",
            "Median seconds from the query's start to its executed plan, and in all, for the queries",
            "timed that way (Delta tables: Delta's planning reads the table's log and lists its files",
            "in Spark jobs of its own, before any scan runs, the same work with and without lmspark).",
            "",
            planning,
            "",
        ]
    for c in charts:
        out += [f"![{c}]({c})", ""]
    out += ["## How it was run", "", "```", command, "```", ""]
    out += [
        f"- timed runs per query: {a.runs} (median reported), after {a.warmups} untimed warm-up run(s); "
        + (f"time limit {a.time_limit:g} min: slow queries get fewer timed runs (see `run.py`)"
           if a.time_limit else "no time limit"),
        f"- data generation: {datagen_s:.0f} s (0 if cached); whole run: {total_s / 60:.1f} min",
        "- engine wall time: " + ", ".join(f"{k} {v / 60:.1f} min" for k, v in engine_seconds.items()),
        f"- machine: {m.get('cpu', '?')}, {m.get('cores')} cores, {m.get('memory', '?')} RAM; {m.get('os')}",
        f"- {m.get('java')}; Python {m.get('python')}; repo commit {m.get('git')}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())),
        f"- lmspark jar: `{lm_jar or 'n/a'}`; Comet jar: `{comet_jar or 'n/a'}`",
        "",
        "Spark engines: each in its own Python process and fresh SparkSession with "
        + ", ".join(f"`{k}={v}`" for k, v in engines_mod.SPARK_COMMON.items())
        + f"; Comet adds its plugin, shuffle manager and `spark.memory.offHeap.size={engines_mod.COMET_OFFHEAP}`. "
        "Spark results are consumed with `df.write.format(\"noop\")`; DuckDB and DataFusion results are "
        "pulled batch by batch as Arrow.",
        "",
        "## Engines",
        "",
        "| engine | what | status |",
        "|---|---|---|",
    ]
    for e in engines:
        status = "ran" if e.name in ran else f"**could not run**: `{unavailable.get(e.name, 'not run')}`"
        if e.name + " (partly)" in unavailable:
            status += f"; stopped early: `{unavailable[e.name + ' (partly)']}`"
        out.append(f"| {e.name} | {e.description} | {status} |")
    out += ["", "## Data", "", "| data set | rows | files | row groups | size |", "|---|---:|---:|---:|---:|"]
    for n, d in ds_info.items():
        out.append(f"| {n} | {d['rows']:,} | {d['files']} | {d['row_groups']} | {d['bytes'] / 2**20:.0f} MiB |")
    out += ["", "See the docstring of `python/lmspark/bench/data.py` for how each is generated."]
    errors = [r for r in rows if r.get("status") == "error"]
    if errors:
        out += ["", "## Queries that failed", "", "| engine | dataset | query | runs | error |", "|---|---|---|---:|---|"]
        grouped: dict = {}
        for r in errors:
            k = (r["engine"], r["dataset"], r["query"], r.get("error") or "")
            grouped[k] = grouped.get(k, 0) + 1
        for (e, ds, q, err), n in grouped.items():
            out.append(f"| {e} | {ds} | {q} | {n} | {err} |")
    skipped = [r for r in rows if r.get("status") == "skipped"]
    if skipped:
        out += ["", "## Timed runs left out to keep to the time limit", "",
                "A median over fewer runs shows the count in brackets in the table above.", "",
                "| engine | queries with fewer runs | runs left out |", "|---|---:|---:|"]
        for e in ran:
            mine = [r for r in skipped if r["engine"] == e]
            if mine:
                out.append(f"| {e} | {len({(r['dataset'], r['query']) for r in mine})} | {len(mine)} |")
    for e in ran:
        if any(r["engine"] == e and any(k.startswith("m_") for k in r) for r in rows):
            t = report.lm_metrics_table(rows, e, cells, metric_types)
            if t:
                out += ["", f"## {e}: SQL metrics of its first timed run", "", t]
    out.append("")
    return "\n".join(out)
