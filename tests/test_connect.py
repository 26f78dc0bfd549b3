"""Spark Connect: lmspark behind a real Connect server started by ``python -m lmspark.connect``.

One server for the run (the session fixture ``connect_server``: the launcher on a free port; at the
end SIGTERM to the launcher, which must exit 0 having stopped the server's whole process group and
freed the port). Against it, from Spark Connect client sessions (``pyspark.sql.connect``):

- a seeded differential set: random filters and projections over pyarrow files (the generator and
  files of ``test_late_materialization.py``, each case under one of its flag combinations set from
  the client), and random queries over pyarrow-written nested tables (``test_nested.py``'s schemas,
  data and queries). Each query must be planned through ``LmParquetScan`` (its EXPLAIN text) and
  give exactly the rows of the same server in another client session with ``spark.lmspark.enabled``
  and Parquet filter pushdown off, compared as JSON text of every row (``to_json``);
- Delta tables, when ``LMSPARK_DELTA_JARS`` names the line's Delta jars (``make delta-jars``): the
  server also loads Delta's extension, which the launcher keeps beside lmspark's;
- two client sessions at once, with opposite ``spark.lmspark.enabled``, each seeing its own;
- ``lmspark.status`` and ``lmspark.explain`` on Connect sessions and DataFrames;
- a corrupt and a truncated file: the error that reaches the client names the file (and, for the
  corrupt page, the row group and the column);
- an unknown ``spark.lmspark.*`` flag refused, a bad value of a flag refused when it is set;
- ``enable_lm`` on a remote builder raises and leaves the builder as it was.

The launcher's own checks (unsupported line, missing jars, port taken, merged arguments) and the
EXPLAIN text parser need no server. Where this line's Connect client cannot be imported, or its
server cannot start here (3.5, whose Connect jar comes from Maven Central), the server tests skip
with the reason. ``LMSPARK_TEST_SEED`` changes the data and the cases; ``LMSPARK_CONNECT_ARGS`` adds
spark-submit arguments to the server's.
"""

from __future__ import annotations

import concurrent.futures
import copy
import os
import random
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datagen
import lmspark
from conftest import DELTA_JARS, LM_NODE, REFERENCE_CONF, SPARK_NODE, describe_difference, error_summary
from lmspark import conf as C
from lmspark import connect as launcher
from lmspark.explain_text import scans_of_explain
from lmspark.lines import LINES_WITH_EXPLAIN_PROVIDERS
from test_late_materialization import COMBOS, FILES, CaseGen, lm_files  # noqa: F401 (lm_files: a fixture)

SEED = int(os.environ.get("LMSPARK_TEST_SEED", "20261129"))
#: More spark-submit arguments for the server, e.g. another Spark 3.5 patch's Connect jar where the
#: installed patch's cannot be resolved: ``--packages org.apache.spark:spark-connect_2.12:3.5.7``.
CONNECT_ARGS_ENV = "LMSPARK_CONNECT_ARGS"
LINE = lmspark.spark_line()
CASES_PER_FILE = 8
NESTED_TABLES = 3
CASES_PER_NESTED_TABLE = 6
#: Exact JSON text of a row (as test_nested.py compares them): timestamps to the microsecond.
JSON_OPTS = ("map('timestampFormat', 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSSXXX', "
             "'timestampNTZFormat', 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSS', 'dateFormat', 'yyyy-MM-dd', "
             "'ignoreNullFields', 'false')")


# --------------------------------------------------------------------------------------------
# The server and client sessions
# --------------------------------------------------------------------------------------------


def _client_missing() -> str | None:
    """Why this pyspark's Spark Connect client cannot be used here, or None."""
    try:
        import pyspark.sql.connect.session  # noqa: F401 - checks grpcio, pandas, pyarrow, ... on import
    except Exception as e:  # noqa: BLE001
        return (f"the Spark Connect client of pyspark {LINE} cannot be imported here ({error_summary(e, 200)}); "
                "install the client's dependencies pinned in python/requirements-dev.txt")
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _delta_args() -> list[str]:
    """Delta's jars, extension and catalog for the server, with ``LMSPARK_DELTA_JARS``."""
    if not DELTA_JARS:
        return []
    jars = sorted(str(p) for p in Path(DELTA_JARS).glob("*.jar"))
    return ["--jars", ",".join(jars), "--conf", "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension",
            "--conf", "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog"]


@dataclass
class ConnectServer:
    url: str
    port: int
    log: Path


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    missing = _client_missing()
    if missing:
        pytest.skip(missing)
    port = _free_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    extra = ["--driver-memory", "2g", "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=4",
             "--conf", "spark.sql.session.timeZone=UTC", "--conf", "spark.driver.extraJavaOptions=-Duser.timezone=UTC",
             *_delta_args(), *shlex.split(os.environ.get(CONNECT_ARGS_ENV, ""))]
    proc = subprocess.Popen([sys.executable, "-m", "lmspark.connect", "--port", str(port), "--master", "local[2]",
                             "--log", str(log), "--timeout", "240", "--", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()  # the URL once the server accepts connections, or EOF
    if not url.startswith("sc://"):
        proc.wait(60)
        said = proc.stderr.read().strip()
        if LINE == "3.5" and "could not get org.apache.spark:spark-connect_2.12" in said:
            pytest.skip(f"Spark 3.5's Connect server cannot start here: {said.splitlines()[-1]} (to try another "
                        f"3.5 patch's Connect jar: {CONNECT_ARGS_ENV}='--packages "
                        "org.apache.spark:spark-connect_2.12:3.5.<n>')")
        pytest.fail(f"the launcher did not start a server (exit {proc.returncode}):\n{said}\n"
                    f"{log.read_text(errors='replace')[-3000:] if log.exists() else ''}")
    assert url == f"sc://localhost:{port}"
    yield ConnectServer(url, port, log)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(120)
    said = proc.stderr.read()
    pid = int(re.search(r"\(pid (\d+)\)", said).group(1))
    ps = subprocess.run(["ps", "-eo", "pid=,pgid=,stat=,cmd="], capture_output=True, text=True).stdout
    left = [p for p in ps.splitlines() if p.split()[1] == str(pid)]
    assert not left, "left of the server's process group:\n" + "\n".join(left) + f"\n{said}"
    assert code == 0, said
    assert not _accepts(port), f"port {port} still accepts connections after the launcher stopped"


#: Every client session made here, referenced until the process ends. pyspark 3.5's Connect session
#: closes its client when garbage-collected (``__del__``), which joins the thread pool all clients
#: share for ReleaseExecute calls; collected inside one of that pool's threads, it waits for itself
#: and the next query hangs. Never collecting them avoids that.
_SESSIONS: list = []


def _session(url: str):
    """A new Spark Connect client session (a session of its own on the server)."""
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    session = RemoteSparkSession.builder.remote(url).create()
    _SESSIONS.append(session)
    return session


@pytest.fixture(scope="module")
def lm(connect_server):
    """A client session with lmspark as the server starts it (on, default flags)."""
    s = _session(connect_server.url)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def ref(connect_server):
    """A client session of the same server with lmspark and Parquet filter pushdown off."""
    s = _session(connect_server.url)
    for k, v in REFERENCE_CONF.items():
        s.conf.set(k, v)
    yield s
    s.stop()


def _json_rows(session, sql: str, ordered: bool = False):
    """The query's rows as exact JSON text: a multiset, or a list when ``ordered``."""
    rows = [r[0] for r in session.sql(f"SELECT to_json(struct(*), {JSON_OPTS}) AS v FROM ({sql})").collect()]
    return rows if ordered else Counter(rows)


def _plan(df) -> str:
    return df._explain_string(mode="extended")


def _physical(plan: str) -> str:
    return plan.split("== Physical Plan ==", 1)[-1].split("== Extended Information", 1)[0]


def _served_problem(plan: str) -> str | None:
    """None when every Parquet scan of the plan is lmspark's (or the optimizer left none)."""
    physical = _physical(plan)
    if SPARK_NODE in physical or "lmspark fallback" in physical:
        return f"a Parquet scan not served by lmspark:\n{physical}"
    return None


# --------------------------------------------------------------------------------------------
# Differential: flat files, nested tables, Delta
# --------------------------------------------------------------------------------------------


def _with_flags(session, flags: dict[str, str]):
    class _Flags:
        def __enter__(self):
            for k, v in flags.items():
                session.conf.set(k, v)

        def __exit__(self, *exc):
            for k in flags:
                session.conf.unset(k)

    return _Flags()


def _differential(lm, ref, cases, label: str) -> None:
    """Each case (sql, ordered, flags): planned through LmParquetScan, same rows as ``ref``."""
    failures = []
    for number, (sql, ordered, flags) in enumerate(cases):
        where = f"[seed {SEED}, {label} case {number}] flags {flags}\n  SQL: {sql}"
        expected = _json_rows(ref, sql, ordered)
        try:
            with _with_flags(lm, flags):
                problem = _served_problem(_plan(lm.sql(sql)))
                got = _json_rows(lm, sql, ordered)
        except Exception as e:  # noqa: BLE001 - a failed query is a finding, reported with its case
            failures.append(f"{where}\n  lmspark failed: {error_summary(e, 500)}")
            continue
        if problem:
            failures.append(f"{where}\n  {problem[:1500]}")
        elif got != expected:
            diff = (describe_difference(got, expected) if not ordered
                    else f"ordered rows differ:\n  lmspark {got[:5]}\n  reference {expected[:5]}")
            failures.append(f"{where}\n  {diff}")
    assert not failures, f"{len(failures)} of {len(cases)} failed (LMSPARK_TEST_SEED={SEED}):\n" + "\n".join(failures[:5])


@pytest.mark.parametrize("file_index", range(len(FILES)), ids=list(FILES))
def test_flat_differential(lm, ref, lm_files, file_index):
    name = list(FILES)[file_index]
    path, table = lm_files[name]
    gen = CaseGen(table, random.Random(SEED * 1009 + file_index))
    cases = [(gen.case(path), False, COMBOS[(file_index * CASES_PER_FILE + j) % len(COMBOS)])
             for j in range(CASES_PER_FILE)]
    _differential(lm, ref, cases, f"file {name}")


@pytest.fixture(scope="module")
def nested_tables(tmp_path_factory):
    """``NESTED_TABLES`` of test_nested.py's random tables that pyarrow alone writes (copies of its
    specs, so that its own run is untouched), written as that suite writes them."""
    import test_nested as tn

    root = tmp_path_factory.mktemp("connect_nested")
    picked = [s for s in tn.SPECS if all(p.writer == "pyarrow" for p in s.parts)][:NESTED_TABLES]
    specs = []
    for original in picked:
        spec = copy.deepcopy(original)
        folder = root / spec.key
        folder.mkdir()
        for j, part in enumerate(spec.parts):
            table = tn.gen_part_table(spec, j)
            part.options = tn._write_pyarrow(table, folder / f"{part.name}.parquet", part.options,
                                             random.Random(part.seed + 1))
        spec.folder = folder
        spec.view = f"parquet.`{folder}`"
        specs.append(spec)
    return specs


@pytest.mark.parametrize("table_index", range(NESTED_TABLES))
def test_nested_differential(lm, ref, nested_tables, table_index):
    import test_nested as tn

    spec = nested_tables[table_index]
    gen = tn.CaseGen(spec, random.Random(SEED * 1_000_003 + spec.index))
    cases = [(c.sql, c.ordered, {}) for c in (gen.case(i) for i in range(CASES_PER_NESTED_TABLE))]
    _differential(lm, ref, cases, f"nested table {spec.key} ({spec.describe().splitlines()[1].strip()})")


def test_delta_differential(lm, ref, tmp_path):
    """Delta tables with rows deleted through deletion vectors, written and changed from the client."""
    if not DELTA_JARS:
        pytest.skip("LMSPARK_DELTA_JARS not set: the server has no Delta (make delta-jars, then LMSPARK_DELTA_JARS)")
    import test_delta as td

    table = td._data(SEED)
    staging = tmp_path / "staging"
    datagen.write(table, staging / "part-0.parquet", row_group_size=600)
    path = tmp_path / "delta"
    lm.conf.set("spark.databricks.delta.properties.defaults.enableDeletionVectors", "true")
    try:
        lm.read.parquet(str(staging)).repartition(3).write.format("delta").save(str(path))
        lm.sql(f"DELETE FROM delta.`{path}` WHERE c_int % 7 = 0")
    finally:
        lm.conf.unset("spark.databricks.delta.properties.defaults.enableDeletionVectors")
    gen = CaseGen(table, random.Random(SEED * 7))
    cases = [(gen.case(path).replace(f"parquet.`{path}`", f"delta.`{path}`"), False, {}) for _ in range(10)]
    _differential(lm, ref, cases, "delta")
    remaining = lm.sql(f"SELECT count(*) FROM delta.`{path}`").collect()[0][0]
    assert remaining == sum(1 for v in table.column("c_int").to_pylist() if v is None or v % 7 != 0)


# --------------------------------------------------------------------------------------------
# Sessions, status, explain
# --------------------------------------------------------------------------------------------


def test_two_sessions_at_once_each_see_their_own_flag(connect_server, lm_files):
    path, table = lm_files["dict_small_pages_v1"]
    gen = CaseGen(table, random.Random(SEED * 13))
    queries = [gen.case(path) for _ in range(4)]
    on, off = _session(connect_server.url), _session(connect_server.url)
    try:
        on.conf.set(C.ENABLED, "true")
        off.conf.set(C.ENABLED, "false")
        expected = [_json_rows(off, q) for q in queries]

        def run(session, enabled: bool) -> list[str]:
            problems = []
            for _ in range(3):
                for q, want in zip(queries, expected):
                    if session.conf.get(C.ENABLED) != str(enabled).lower():
                        problems.append(f"{C.ENABLED} reads {session.conf.get(C.ENABLED)}")
                    physical = _physical(_plan(session.sql(q)))
                    if enabled and SPARK_NODE in physical or not enabled and LM_NODE in physical:
                        problems.append(f"enabled={enabled}, plan:\n{physical}")
                    if _json_rows(session, q) != want:
                        problems.append(f"enabled={enabled}: rows differ for {q}")
            return problems

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            results = [pool.submit(run, on, True), pool.submit(run, off, False)]
            problems = [p for f in results for p in f.result()]
        assert not problems, "\n".join(problems[:5])
        assert lmspark.status(on).active and not lmspark.status(off).active
    finally:
        on.stop()
        off.stop()


def _names(table: str, path: Path) -> bool:
    """A scan's table names ``path``: whole, or (3.5's plan text, cut by Spark) its beginning."""
    if table.endswith("..."):
        return str(path).startswith(table[:-3].removeprefix("file:")) and len(table) > 20
    return table.removeprefix("file:") == str(path)


def test_status_and_explain(connect_server, lm, ref, lm_files):
    path, _ = lm_files["plain_v2_zstd_sorted"]
    st = lmspark.status(lm)
    assert st.connect and st.configured and st.loaded and st.enabled and st.active, st
    assert st.spark_version == lm.version and not st.unknown_flags and not st.reason
    assert st.explain_section == (LINE in LINES_WITH_EXPLAIN_PROVIDERS), st
    assert "lmspark is active on the Spark Connect server" in str(st)
    off = lmspark.status(ref)
    assert off.loaded and not off.enabled and not off.active and C.ENABLED in off.reason, off

    query = f"SELECT c_int FROM parquet.`{path}` WHERE c_int > 0"
    e = lmspark.explain(lm.sql(query))
    assert e.active and e.served and not e.reasons, e
    (scan,) = e.scans
    assert _names(scan.table, path), scan
    assert lmspark.explain(ref.sql(query)).scans == ()
    assert lmspark.metrics(lm.sql(query)) == {}

    declined = _session(connect_server.url)
    try:
        declined.conf.set("spark.sql.parquet.enableVectorizedReader", "false")
        e = lmspark.explain(declined.sql(query))
        assert e.active and not e.served, e
        (scan,) = e.scans
        assert scan.reasons and scan.reasons[0].startswith("Spark's vectorized Parquet reader"), scan
        if LINE in LINES_WITH_EXPLAIN_PROVIDERS:  # the lmspark section has the reasons whole
            assert "spark.sql.parquet.enableVectorizedReader is false" in scan.reasons[0], scan
        assert _names(scan.table, path), scan
    finally:
        declined.stop()


# --------------------------------------------------------------------------------------------
# Flags
# --------------------------------------------------------------------------------------------


def test_unknown_flag_is_refused(connect_server, lm_files):
    path, _ = lm_files["dict_fallback_sorted"]
    query = f"SELECT count(*), sum(c_int) FROM parquet.`{path}` WHERE c_string IS NOT NULL"
    s = _session(connect_server.url)
    try:
        expected = s.sql(query).collect()
        for typo, how in (("spark.lmspark.batchsize", "conf"), ("spark.lmspark.lateMaterialisation.enabled", "sql")):
            closest = {"spark.lmspark.batchsize": C.BATCH_SIZE,
                       "spark.lmspark.lateMaterialisation.enabled": C.LATE_MATERIALIZATION_ENABLED}[typo]
            if how == "conf":
                s.conf.set(typo, "64")
            else:
                s.sql(f"SET {typo}=false").collect()
            with pytest.raises(Exception) as e:
                s.sql(query).collect()
            assert f"{typo} is not an lmspark flag (did you mean {closest}?)" in str(e.value), str(e.value)
            assert type(e.value).__name__ == "IllegalArgumentException", type(e.value)
            st = lmspark.status(s)
            assert st.unknown_flags == {typo: closest} and not st.active and typo in st.reason, st
            assert s.sql("SELECT 40 + 2").collect()[0][0] == 42  # no Parquet scan: runs
            if how == "conf":
                s.conf.unset(typo)
            else:
                s.sql(f"RESET {typo}").collect()
            assert s.sql(query).collect() == expected
            assert lmspark.status(s).active
    finally:
        s.stop()


@pytest.mark.parametrize("how", ["spark.conf.set", "SQL SET"])
def test_bad_flag_value_is_refused_when_set(connect_server, how):
    """Flags refuse a value none of their parsers takes when it is set, and keep their value; as in a
    classic session (LmConfRegistrationSuite), Spark's check of the registered flag answers."""
    s = _session(connect_server.url)
    try:
        for key in random.Random(SEED).sample(sorted(C.DEFAULTS), 8):
            before = s.conf.get(key)
            with pytest.raises(Exception) as e:
                if how == "spark.conf.set":
                    s.conf.set(key, "abc")
                else:
                    s.sql(f"SET {key}=abc").collect()
            assert key in str(e.value) and "'abc'" in str(e.value), str(e.value)
            assert type(e.value).__name__ == "IllegalArgumentException", type(e.value)
            assert s.conf.get(key) == before == C.DEFAULTS[key]
    finally:
        s.stop()


# --------------------------------------------------------------------------------------------
# Errors across the wire
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def broken_files(tmp_path_factory) -> dict[str, Path]:
    """A file whose page header in row group 1 of column ``s`` is overwritten, and one cut in half."""
    root = tmp_path_factory.mktemp("connect_broken")
    n = 5000
    table = pa.table({"id": pa.array(range(n), pa.int64()),
                      "s": pa.array([f"v{i % 97}-{i}" for i in range(n)], pa.string())})
    good = datagen.write(table, root / "good.parquet", row_group_size=2000, use_dictionary=False, compression="none")
    data = bytearray(good.read_bytes())
    offset = pq.ParquetFile(str(good)).metadata.row_group(1).column(1).data_page_offset
    data[offset:offset + 12] = b"\xff" * 12
    (root / "corrupt.parquet").write_bytes(bytes(data))
    (root / "truncated.parquet").write_bytes(good.read_bytes()[: len(data) // 2])
    return {"corrupt": root / "corrupt.parquet", "truncated": root / "truncated.parquet"}


def test_corrupt_file_error_names_file_row_group_and_column(lm, broken_files):
    path = broken_files["corrupt"]
    df = lm.read.schema("id long, s string").parquet(str(path)).where("id >= 0")
    assert LM_NODE in _physical(_plan(df))
    with pytest.raises(Exception) as e:
        df.collect()
    msg = str(e.value)
    assert str(path) in msg and "row group 1" in msg and "column s" in msg, msg[:3000]
    assert lm.sql("SELECT 1").collect()[0][0] == 1  # the session still answers


def test_truncated_file_error_names_file(lm, broken_files):
    path = broken_files["truncated"]
    df = lm.read.schema("id long, s string").parquet(str(path))
    assert LM_NODE in _physical(_plan(df))
    with pytest.raises(Exception) as e:
        df.collect()
    assert str(path) in str(e.value), str(e.value)[:3000]
    assert lm.sql("SELECT 1").collect()[0][0] == 1


# --------------------------------------------------------------------------------------------
# enable_lm on a remote builder
# --------------------------------------------------------------------------------------------


def test_enable_lm_on_a_remote_builder_raises(connect_server):
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    for builder in (SparkSession.builder.remote(connect_server.url), RemoteSparkSession.builder.remote(connect_server.url)):
        before = dict(builder._options)
        with pytest.raises(lmspark.RemoteSessionError) as e:
            lmspark.enable_lm(builder)
        msg = str(e.value)
        for part in ("python -m lmspark.connect", f"--jars {lmspark.jar_path()}",
                     f"spark.sql.extensions={lmspark.EXTENSION_CLASS}", connect_server.url):
            assert part in msg, msg
        assert builder._options == before
    s = RemoteSparkSession.builder.remote(connect_server.url).create()  # the builder still works
    _SESSIONS.append(s)
    try:
        assert lmspark.status(s).active
    finally:
        s.stop()


# --------------------------------------------------------------------------------------------
# The launcher without a server
# --------------------------------------------------------------------------------------------


def _fake_pyspark(tmp_path: Path, version: str, connect_jar: bool) -> launcher.Pyspark:
    home = tmp_path / f"pyspark-{version}-{'with' if connect_jar else 'no'}-connect"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    (home / "jars").mkdir(exist_ok=True)
    (home / "bin" / "spark-submit").write_text("#!/bin/sh\nexit 1\n")
    if connect_jar:
        scala = lmspark.lines.SCALA_OF_LINE[lmspark.spark_line(version)]
        (home / "jars" / f"spark-connect_{scala}-{version}.jar").write_bytes(b"")
    return launcher.Pyspark(version, home)


def _one_line_failure(capsys, argv: list[str], spark) -> str:
    assert launcher.main(argv, spark=spark) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_launcher_refuses_unsupported_line_missing_connect_jar_and_taken_port(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LMSPARK_JAR", str(tmp_path / "lmspark.jar"))
    err = _one_line_failure(capsys, ["--port", str(_free_port())], _fake_pyspark(tmp_path, "3.4.1", False))
    assert "3.4.1" in err and all(line in err for line in lmspark.SUPPORTED_LINES), err
    err = _one_line_failure(capsys, ["--port", str(_free_port())], _fake_pyspark(tmp_path, "4.1.4", False))
    assert "spark-connect_2.13-4.1.4.jar" in err and "--jars" in err, err
    with socket.socket() as taken:
        taken.bind(("", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = _one_line_failure(capsys, ["--port", str(port)], _fake_pyspark(tmp_path, "4.2.1", True))
    assert f"port {port} is taken" in err, err
    for extra in (["--master", "local"], ["--conf", f"{launcher.PORT_CONF}=1"], ["--class", "x.Y"]):
        err = _one_line_failure(capsys, ["--port", str(_free_port()), "--", *extra], _fake_pyspark(tmp_path, "4.3.0", True))
        assert extra[0] in err or launcher.PORT_CONF in err, err


def test_launcher_command_merges_user_arguments(tmp_path, monkeypatch):
    jar = str(tmp_path / "lmspark.jar")
    monkeypatch.setenv("LMSPARK_JAR", jar)

    def confs(cmd: list[str]) -> dict[str, str]:
        return dict(cmd[i + 1].split("=", 1) for i, a in enumerate(cmd) if a == "--conf")

    extra = ["--jars", "a.jar", "--conf", "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension",
             "--conf=spark.jars=b.jar", "--driver-memory", "2g", "-c", "spark.x=1"]
    cmd = launcher.server_command(_fake_pyspark(tmp_path, "4.3.0", True), 15123, "local[2]", extra)
    assert cmd[cmd.index("--class") + 1] == launcher.SERVER_CLASS and cmd[-1] == "spark-internal"
    assert cmd[cmd.index("--jars") + 1] == f"a.jar,b.jar,{jar}" and "--packages" not in cmd
    assert cmd[cmd.index("--master") + 1] == "local[2]" and "--driver-memory" in cmd
    got = confs(cmd)
    assert got["spark.sql.extensions"] == f"io.delta.sql.DeltaSparkSessionExtension,{lmspark.EXTENSION_CLASS}"
    assert got["spark.sql.extendedExplainProviders"] == lmspark.EXPLAIN_PROVIDER_CLASS
    assert got[launcher.PORT_CONF] == "15123" and got["spark.x"] == "1"
    # 3.5: no Connect jar in the package, so Maven's, through --packages, unless one is given
    spark35 = _fake_pyspark(tmp_path, "3.5.9", False)
    cmd = launcher.server_command(spark35, 15002, "local[*]", [])
    assert cmd[cmd.index("--packages") + 1] == "org.apache.spark:spark-connect_2.12:3.5.9"
    assert "spark.sql.extendedExplainProviders" not in confs(cmd)
    cmd = launcher.server_command(spark35, 15002, "local[*]", ["--jars", "/x/spark-connect_2.12-3.5.9.jar"])
    assert "--packages" not in cmd


# --------------------------------------------------------------------------------------------
# EXPLAIN text, as a Connect client reads it
# --------------------------------------------------------------------------------------------


def test_explain_text_section_and_plan_lines():
    section = ("== Physical Plan ==\n*(1) ColumnarToRow\n+- LmParquetScan [a#1] Batched: true, Format: Parquet, "
               "Location: InMemoryFileIndex(1 paths)[file:/t/a], ReadSchema: struct<a:int>\n\n"
               "== Extended Information (lmspark) ==\nLmParquetScan: file:/t/a\n"
               "Spark scan (lmspark fallback): db.t\n  reason: column v: a user-defined type\n  reason: r2; with a semicolon\n"
               "LmParquetScan: file:/t/a\n")
    assert scans_of_explain(section) == [("file:/t/a", True, ()),
                                         ("db.t", False, ("column v: a user-defined type", "r2; with a semicolon"))]
    assert scans_of_explain("== Physical Plan ==\nLocalTableScan\n\n== Extended Information (lmspark) ==\n"
                            "no Parquet scans\n") == []
    plan = ("== Physical Plan ==\n*(2) Project\n+- LmParquetScan [a#1] Batched: true, DataFilters: [], Format: Parquet, "
            "Location: InMemoryFileIndex(1 paths)[file:/t/a], PartitionFilters: [], ReadSchema: struct<a:int>\n"
            "   +- FileScan parquet [b#2] Batched: true, DataFilters: [], Format: Parquet [lmspark fallback: one; two], "
            "Location: InMemoryFileIndex(1 paths)[file:/t/b], PartitionFilters: [], ReadSchema: struct<b:int>\n"
            "   +- FileScan parquet [c#3] Batched: true, DataFilters: [], Format: Parquet [lmspark fallback: a long rea..., "
            "Location: InMemoryFileIndex(1 paths)[file:/t/c/a/long/pa..., PartitionFilters: [], ReadSchema: struct<c:int>\n"
            "   +- FileScan parquet [d#4] Batched: true, DataFilters: [], Format: Parquet, "
            "Location: InMemoryFileIndex(1 paths)[file:/t/d], PartitionFilters: [], ReadSchema: struct<d:int>\n")
    assert scans_of_explain(plan) == [("file:/t/a", True, ()), ("file:/t/b", False, ("one", "two")),
                                      ("file:/t/c/a/long/pa...", False, ("a long rea...",))]
