"""lmspark on a real multi-process cluster: a Spark standalone master and two workers on loopback.

The master and the workers are started with ``bin/spark-class`` from the pyspark package
(``SPARK_HOME`` = the pyspark folder; the pip package ships no ``start-master.sh``), each in its own
process group, on free ports, with logs, work dirs and an empty conf dir under a temp dir; each
worker offers 1 core and 1 GiB. The fixture stops them at the end, even when a test fails or the
start itself fails, by killing the process groups (the workers' executors included).

The driver runs in a child process (``cluster_app.py``: one SparkContext per Python process, and
the other suites share a ``local[2]`` one), built with ``lmspark.enable_lm``, so the jar reaches the
executors only through ``spark.jars``. Every query runs with lmspark on and as the reference
(lmspark off, Parquet filter pushdown off) in that one session; each must give the same rows, its
executed plan must use ``LmParquetScan`` without fallback, and the scan's metrics (which executors
send back; the standalone driver runs no tasks) must show files and row groups read. Across the
lmspark runs, the scan stages' tasks must have run on both executors.

The data (pyarrow, seeded by ``LMSPARK_TEST_SEED``): several files of random rows with nulls and
dictionary-encoded strings, and files sorted on ``id`` with small pages and page indexes, so that
the point and range queries are prunable by the page index.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pytest

import datagen
import lmspark

SEED = int(os.environ.get("LMSPARK_TEST_SEED", "20261122"))
WORKERS = 2
HERE = Path(__file__).resolve().parent
START_TIMEOUT = 300  # seconds; a hang guard, not a timing check (scalatest may be running beside it)
DRIVER_TIMEOUT = 900


def _pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    """A standalone master and its workers, as child process groups; :meth:`stop` kills them all."""

    root: Path
    master_port: int = 0
    master_ui_port: int = 0
    procs: list[tuple[str, subprocess.Popen]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    def env(self) -> dict[str, str]:
        home = _pyspark_home()
        conf_dir = self.root / "conf"
        conf_dir.mkdir(exist_ok=True)
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(home),
            SPARK_CONF_DIR=str(conf_dir),  # empty: no user or machine config gets in
            SPARK_LOG_DIR=str(self.root / "logs"),
            SPARK_PID_DIR=str(self.root / "pids"),
            SPARK_WORKER_DIR=str(self.root / "work"),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOCAL_DIRS=str(self.root / "local"),
            SPARK_DAEMON_MEMORY="512m",
            SPARK_NO_DAEMONIZE="1",
            PYSPARK_PYTHON=sys.executable,
            TZ="UTC",
        )
        return env

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "wb")
        cmd = ["nice", "-n", "10", str(_pyspark_home() / "bin" / "spark-class"), *args]
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env(), cwd=self.root, start_new_session=True)
        log.close()
        self.procs.append((name, p))
        return p

    def log_tail(self, limit: int = 3000) -> str:
        out = []
        for name, _ in self.procs:
            f = self.root / f"{name}.log"
            if f.exists():
                out.append(f"--- {name} ---\n" + f.read_text(errors="replace")[-limit:])
        return "\n".join(out)

    def start(self, workers: int) -> None:
        self.master_port, self.master_ui_port = _free_port(), _free_port()
        self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(self.master_port), "--webui-port", str(self.master_ui_port)])
        self._wait(lambda s: s is not None, "master")
        for i in range(workers):
            work = self.root / "work" / f"worker{i}"
            work.mkdir(parents=True, exist_ok=True)
            self._spawn(f"worker{i}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                       "--port", "0", "--webui-port", str(_free_port()),
                                       "--cores", "1", "--memory", "1g", "--work-dir", str(work), self.url])
        self._wait(lambda s: s is not None and s.get("aliveworkers", 0) >= workers, f"{workers} workers")

    def state(self) -> dict | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.master_ui_port}/json/", timeout=5) as r:
                return json.loads(r.read().decode())
        except Exception:  # noqa: BLE001 - not up yet
            return None

    def _wait(self, ready, what: str) -> None:
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            dead = [n for n, p in self.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{', '.join(dead)} exited while waiting for {what}\n{self.log_tail()}")
            if ready(self.state()):
                return
            time.sleep(0.5)
        raise RuntimeError(f"timed out waiting for {what}\n{self.log_tail()}")

    def stop(self) -> None:
        """Workers first, then the master: SIGTERM to each process group, SIGKILL after a grace."""
        for _, p in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.time() + 20
        for _, p in reversed(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)  # the group: executors the worker started too
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster():
    if not (_pyspark_home() / "bin" / "spark-class").exists():
        pytest.skip("this pyspark has no bin/spark-class")
    root = Path(tempfile.mkdtemp(prefix="lmspark-cluster-"))
    c = Cluster(root)
    try:
        try:
            c.start(WORKERS)
        except PermissionError as e:  # only an environment that forbids processes/sockets skips
            pytest.skip(f"cannot start a standalone cluster here: {e}")
        yield c
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Data and queries
# --------------------------------------------------------------------------------------------

MIXED_COLUMNS = {
    "c_int": pa.int32(),
    "c_long": pa.int64(),
    "c_double": pa.float64(),
    "c_string": pa.string(),
    "c_date": pa.date32(),
    "c_ts_us": pa.timestamp("us", tz="UTC"),
    "c_bool": pa.bool_(),
    "c_dec_18_4": pa.decimal128(18, 4),
}
MIXED_FILES, MIXED_ROWS = 6, 1500
SORTED_FILES, SORTED_ROWS = 4, 3000


def _write_data(root: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    rng = random.Random(SEED)
    mixed, sorted_ = root / "mixed", root / "sorted"
    strings: list[str] = []
    for i in range(MIXED_FILES):
        t = datagen.make_table(MIXED_COLUMNS, MIXED_ROWS, SEED + i, "some")
        strings += [s for s in t.column("c_string").to_pylist() if s is not None]
        datagen.write(t, mixed / f"part-{i:03d}.parquet", row_group_size=500, data_page_size=1024,
                      use_dictionary=True, write_page_index=True, compression=rng.choice(["snappy", "zstd"]))
    for i in range(SORTED_FILES):
        t = datagen.make_table({"c_string": pa.string(), "c_double": pa.float64()}, SORTED_ROWS,
                               SEED + 100 + i, "some")
        ids = pa.array(range(i * SORTED_ROWS, (i + 1) * SORTED_ROWS), pa.int64())
        t = t.add_column(0, pa.field("id", pa.int64(), False), ids)
        datagen.write(t, sorted_ / f"part-{i:03d}.parquet", row_group_size=1000, data_page_size=256,
                      write_batch_size=50, use_dictionary=False, write_page_index=True)
    common = max(set(strings), key=strings.count)  # a dictionary value present in many files
    rare = rng.choice(strings)
    quote = lambda s: "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"  # noqa: E731
    total = SORTED_FILES * SORTED_ROWS
    lo = rng.randrange(total - 200)
    point = rng.randrange(total)
    queries = [
        ("full_scan", "SELECT * FROM mixed"),
        ("projection", "SELECT c_long, c_string FROM mixed"),
        ("dict_string_eq", f"SELECT * FROM mixed WHERE c_string = {quote(common)}"),
        ("dict_string_in", f"SELECT c_int, c_string FROM mixed WHERE c_string IN ({quote(common)}, {quote(rare)})"),
        ("is_null", "SELECT c_int, c_date FROM mixed WHERE c_string IS NULL"),
        ("not_null_and_range", "SELECT * FROM mixed WHERE c_long IS NOT NULL AND c_int > 0"),
        ("null_safe_or", "SELECT c_double, c_ts_us FROM mixed WHERE c_bool <=> true OR c_double < 0"),
        ("count_filter", "SELECT count(*) AS n FROM mixed WHERE c_dec_18_4 > 0"),
        ("group_by", "SELECT c_string, count(*) AS n, min(c_long) AS lo, max(c_ts_us) AS hi FROM mixed GROUP BY c_string"),
        ("sorted_point", f"SELECT * FROM sorted WHERE id = {point}"),
        ("sorted_range", f"SELECT id, c_string FROM sorted WHERE id BETWEEN {lo} AND {lo + 150}"),
        ("sorted_range_string", f"SELECT * FROM sorted WHERE id >= {lo} AND id < {lo + 400} AND c_string IS NOT NULL"),
    ]
    return {"mixed": str(mixed), "sorted": str(sorted_)}, queries


@pytest.fixture(scope="module")
def cluster_run(cluster: Cluster, tmp_path_factory) -> dict:
    """Runs ``cluster_app.py`` against the cluster once; every test reads its result."""
    root = tmp_path_factory.mktemp("cluster_data")
    views, queries = _write_data(root)
    spec = {
        "master": cluster.url,
        "workers": WORKERS,
        "views": views,
        "queries": queries,
        "warehouse": str(root / "warehouse"),
        # small splits: each of the 10 files is at least one task, so both executors get scan tasks
        "max_partition_bytes": 16 * 1024,
    }
    spec_path, result_path = root / "spec.json", root / "result.json"
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ, LMSPARK_JAR=lmspark.jar_path(), PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               TZ="UTC", PYTHONPATH=os.pathsep.join([str(HERE), *sys.path]))
    env.pop("SPARK_HOME", None)  # the driver's pyspark finds its own
    # its own process group, so that a hang guard's kill takes the driver's JVM with it
    p = subprocess.Popen(["nice", "-n", "10", sys.executable, str(HERE / "cluster_app.py"), str(spec_path),
                          str(result_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=DRIVER_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"cluster driver did not finish in {DRIVER_TIMEOUT} s:\n{out[-3000:]}\n{err[-6000:]}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)  # nothing of the driver outlives the test
    assert p.returncode == 0, (
        f"cluster driver failed (rc {p.returncode}):\n{out[-3000:]}\n{err[-6000:]}\n{cluster.log_tail()}"
    )
    return json.loads(result_path.read_text())


QUERY_NAMES = ["full_scan", "projection", "dict_string_eq", "dict_string_in", "is_null", "not_null_and_range",
               "null_safe_or", "count_filter", "group_by", "sorted_point", "sorted_range", "sorted_range_string"]


def test_query_names_match_the_data_spec(tmp_path: Path) -> None:
    assert [n for n, _ in _write_data(tmp_path)[1]] == QUERY_NAMES


@pytest.mark.parametrize("name", QUERY_NAMES)
def test_same_answer_on_cluster(cluster_run: dict, name: str) -> None:
    r = cluster_run["queries"][name]
    assert not r["ref_uses_lm"], f"the reference run used lmspark: {r['sql']}"
    assert r["columns"][0] == r["columns"][1], r["columns"]
    assert r["same"], f"{name}: {r['sql']}\n{r['difference']}\n{r['plan']}"
    assert r["lm_node"] and not r["fallback_reasons"], f"{name}: {r['lm_status']}\n{r['plan']}"
    m = r["metrics"]
    # the standalone driver runs no tasks: these counts came back from the executors
    assert m["scans"] >= 1 and m["lmFilesRead"] > 0 and m["rowGroupsRead"] > 0, (name, m)
    assert m["filesFallback"] == 0, (name, m)
    assert sum(r["executors"].values()) > 0 and "driver" not in r["executors"], (name, r["executors"])


def test_page_index_pruned_on_cluster(cluster_run: dict) -> None:
    """The sorted point query read fewer data pages than its row groups hold (pruned by the page
    index on the executors)."""
    m = cluster_run["queries"]["sorted_point"]["metrics"]
    assert m["pagesPruned"] > 0 and m["pagesRead"] < m["pagesTotal"], m


def test_both_executors_ran_lmspark_tasks(cluster_run: dict) -> None:
    jars = cluster_run["jars"].split(",")
    assert lmspark.jar_path() in jars, f"the lmspark jar is not in spark.jars: {jars}"
    executors = {e for e, info in cluster_run["app_executors"].items() if e != "driver"}
    assert len(executors) >= WORKERS, cluster_run["app_executors"]
    assert all(cluster_run["app_executors"][e]["hostPort"].startswith("127.0.0.1:") for e in executors)
    ran_lm = {}
    for r in cluster_run["queries"].values():
        for ex, n in r["executors"].items():
            ran_lm[ex] = ran_lm.get(ex, 0) + n
    busy = {e for e, n in ran_lm.items() if n > 0 and e != "driver"}
    assert len(busy) >= WORKERS, f"lmspark stages ran on {ran_lm}, expected tasks on {WORKERS} executors"
