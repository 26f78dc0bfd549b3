"""``python -m lmspark.connect``: a Spark Connect server with lmspark, for the installed pyspark.

    python -m lmspark.connect [--port N] [--master M] [--log FILE] [-- extra spark-submit args]

Starts ``org.apache.spark.sql.connect.service.SparkConnectServer`` through the installed pyspark's
own ``spark-submit``, with the lmspark jar of that Spark line, ``lmspark.LmSparkExtensions`` in
``spark.sql.extensions`` (after any extensions passed with ``--conf``) and, from Spark 4.0 on,
lmspark's EXPLAIN section in ``spark.sql.extendedExplainProviders``. Once the server accepts
connections it prints its ``sc://`` URL on standard output (messages go to standard error, the
server's log to ``--log``). Ctrl-C or SIGTERM stops the server (its whole process group).

It exits with status 2 and one line saying why when the line is unsupported, the jar or the
Connect jar is missing, the port is taken, or the server stops before it accepts connections.

The 4.x pip packages carry Spark Connect's jar; for Spark 3.5, whose package does not, it asks
``spark-submit --packages`` for ``org.apache.spark:spark-connect_2.12:<version>`` (from Maven
Central, then Ivy's cache), unless a Connect jar or package is among the extra arguments.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import EXPLAIN_PROVIDER_CLASS, EXTENSION_CLASS, __version__, jar_path, spark_line
from .lines import LINES_WITH_EXPLAIN_PROVIDERS, SCALA_OF_LINE, UnsupportedSparkError

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
PORT_CONF = "spark.connect.grpc.binding.port"
EXTENSIONS_CONF = "spark.sql.extensions"
EXPLAIN_PROVIDERS_CONF = "spark.sql.extendedExplainProviders"
DEFAULT_PORT = 15002
#: How long the server may take to accept connections (3.5 may first download the Connect jar).
DEFAULT_TIMEOUT_S = 300.0
#: How long a stopping server may take before its process group is killed.
STOP_GRACE_S = 30.0

_PROG = "python -m lmspark.connect"


class LaunchError(Exception):
    """The server cannot be started or did not come up; the message is the one-line reason."""


@dataclass
class SubmitArgs:
    """The extra ``spark-submit`` arguments, with the ones the launcher merges taken apart:
    ``--jars``, ``--packages`` and the ``--conf`` values of the lists it appends to."""

    jars: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    confs: dict[str, str] = field(default_factory=dict)
    rest: list[str] = field(default_factory=list)

    _LISTS = {"spark.jars": "jars", "spark.jars.packages": "packages"}

    @classmethod
    def parse(cls, args: list[str]) -> "SubmitArgs":
        out = cls()
        i = 0
        while i < len(args):
            arg = args[i]
            name, eq, inline = arg.partition("=")
            takes_value = name in ("--jars", "--packages", "--conf", "-c", "--master", "--class")
            if takes_value:
                if eq:
                    value = inline
                elif i + 1 < len(args):
                    i += 1
                    value = args[i]
                else:
                    raise LaunchError(f"{name} needs a value")
                if name in ("--master", "--class"):
                    raise LaunchError(f"{name} is the launcher's: use {_PROG} --master M" if name == "--master"
                                      else "--class cannot be changed: the launcher starts the Connect server")
                if name == "--jars":
                    out.jars += _items(value)
                elif name == "--packages":
                    out.packages += _items(value)
                else:
                    key, has_value, conf_value = value.partition("=")
                    if not has_value:
                        raise LaunchError(f"--conf takes key=value, not {value!r}")
                    key = key.strip()
                    if key == PORT_CONF:
                        raise LaunchError(f"{PORT_CONF} is the launcher's: use {_PROG} --port N")
                    if key in cls._LISTS:
                        getattr(out, cls._LISTS[key]).extend(_items(conf_value))
                    elif key in (EXTENSIONS_CONF, EXPLAIN_PROVIDERS_CONF):
                        out.confs[key] = ",".join(_items(out.confs.get(key, "")) + _items(conf_value))
                    else:
                        out.confs[key] = conf_value
            else:
                out.rest.append(arg)
            i += 1
        return out


def _items(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _append(items: list[str], value: str) -> list[str]:
    return items if value in items else items + [value]


@dataclass(frozen=True)
class Pyspark:
    """The installed pyspark: its version, its folder (``bin/spark-submit``, ``jars/``)."""

    version: str
    home: Path

    @classmethod
    def installed(cls) -> "Pyspark":
        try:
            import pyspark
        except ImportError:
            raise LaunchError("pyspark is not installed here: pip install 'pyspark[connect]'") from None

        return cls(pyspark.__version__, Path(pyspark.__file__).resolve().parent)

    @property
    def line(self) -> str:
        return spark_line(self.version)

    @property
    def scala(self) -> str:
        return SCALA_OF_LINE[self.line]

    def connect_jar(self) -> Path | None:
        """Spark Connect's jar inside the package (the 4.x lines), or None (3.5)."""
        jar = self.home / "jars" / f"spark-connect_{self.scala}-{self.version}.jar"
        return jar if jar.is_file() else None

    @property
    def connect_package(self) -> str:
        return f"org.apache.spark:spark-connect_{self.scala}:{self.version}"


def server_command(spark: Pyspark, port: int, master: str, extra: list[str]) -> list[str]:
    """The ``spark-submit`` command line of the server. Raises :class:`LaunchError` when the line
    is unsupported or a jar is missing."""
    try:
        line = spark.line
        jar = jar_path(spark.version)
    except (UnsupportedSparkError, FileNotFoundError) as e:
        raise LaunchError(str(e)) from None
    submit = spark.home / "bin" / "spark-submit"
    if not submit.is_file():
        raise LaunchError(f"pyspark {spark.version} at {spark.home} has no bin/spark-submit; reinstall pyspark")
    args = SubmitArgs.parse(extra)
    jars = _append(args.jars, jar)
    packages = list(args.packages)
    has_connect = any(Path(j).name.startswith("spark-connect_") for j in jars) or any(
        p.startswith("org.apache.spark:spark-connect_") for p in packages)
    if not has_connect and spark.connect_jar() is None:
        if line == "3.5":
            packages.append(spark.connect_package)
        else:
            raise LaunchError(
                f"pyspark {spark.version} has no Spark Connect jar (expected {spark.home}/jars/"
                f"spark-connect_{spark.scala}-{spark.version}.jar); reinstall pyspark {spark.version} from PyPI, "
                f"or pass one: {_PROG} -- --jars /path/to/spark-connect_{spark.scala}-{spark.version}.jar")
    confs = dict(args.confs)
    confs[EXTENSIONS_CONF] = ",".join(_append(_items(confs.get(EXTENSIONS_CONF, "")), EXTENSION_CLASS))
    if line in LINES_WITH_EXPLAIN_PROVIDERS:
        confs[EXPLAIN_PROVIDERS_CONF] = ",".join(
            _append(_items(confs.get(EXPLAIN_PROVIDERS_CONF, "")), EXPLAIN_PROVIDER_CLASS))
    confs[PORT_CONF] = str(port)
    cmd = [str(submit), "--class", SERVER_CLASS, "--name", f"lmspark Spark Connect server (port {port})",
           "--master", master, "--jars", ",".join(jars)]
    if packages:
        cmd += ["--packages", ",".join(packages)]
    for key, value in confs.items():
        cmd += ["--conf", f"{key}={value}"]
    return cmd + args.rest + ["spark-internal"]


def check_port_free(port: int) -> None:
    """Raises :class:`LaunchError` when something already listens on ``port``."""
    if not 0 < port < 65536:
        raise LaunchError(f"port {port} is not a TCP port (1-65535)")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("", port))
        except OSError as e:
            raise LaunchError(f"port {port} is taken ({e.strerror}); choose another with --port") from None


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _listens(pid: int, port: int) -> bool | None:
    """Whether process ``pid`` holds a listening TCP socket on ``port`` (Linux's /proc), or None
    where that cannot be read: then only a connection tells."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
        tables = []
        for name in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(name) as f:
                tables += f.readlines()[1:]
    except OSError:
        return None
    inodes = set()
    for fd in fds:
        try:
            inodes.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:  # closed meanwhile
            pass
    for row in tables:
        cols = row.split()
        if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port and f"socket:[{cols[9]}]" in inodes:
            return True
    return False


#: (pattern in the server's log, reason): the first match names why a server stopped early. ``{port}``
#: in a pattern is the server's port.
_KNOWN_FAILURES = [
    (re.compile(r"(Failed to bind|BindException|bind\(\.\.\) failed).*:{port}\b|:{port}\b.*Address already in use"),
     "port {port} is taken; choose another with --port"),
    (re.compile(r"unresolved dependency|Error downloading|download failed|not found:? .*spark-connect", re.I),
     "could not get {package} through spark-submit --packages (not on Maven Central or its mirror, or no "
     "network); download that jar and pass it: {prog} -- --jars /path/to/{jar}"),
    (re.compile(r"ClassNotFoundException: " + re.escape(SERVER_CLASS)),
     "the Spark Connect jar is not on the server's class path; pass it: {prog} -- --jars /path/to/{jar}"),
    (re.compile(r"JAVA_HOME is not set|java: (command )?not found|No such file or directory.*java", re.I),
     "no Java found: install Java 17 or set JAVA_HOME"),
]


def failure_reason(log_text: str, port: int, spark: Pyspark, code: int | None) -> str:
    """One line: why the server stopped before it accepted connections, read from its log."""
    jar = f"spark-connect_{spark.scala}-{spark.version}.jar"
    for pattern, reason in _KNOWN_FAILURES:
        if re.search(pattern.pattern.replace("{port}", str(port)), log_text, pattern.flags):
            return reason.format(port=port, package=spark.connect_package, prog=_PROG, jar=jar)
    errors = [ln.strip() for ln in log_text.splitlines()
              if re.search(r"(Exception|Error)\b", ln) and not ln.lstrip().startswith("at ")]
    detail = f": {errors[0][:300]}" if errors else ""
    return f"the server stopped (exit code {code}) before it accepted connections{detail}"


def _die_with_parent() -> None:
    """In the server's process: receive SIGTERM when the launcher dies, even by SIGKILL (Linux)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort, not on every platform
        pass


class Server:
    """A running server: its process group, started by :meth:`start`, ended by :meth:`stop`."""

    def __init__(self, proc: subprocess.Popen, port: int, log: Path):
        self.proc, self.port, self.log = proc, port, log

    @classmethod
    def start(cls, cmd: list[str], spark: Pyspark, port: int, log: Path) -> "Server":
        env = dict(os.environ)
        env["SPARK_HOME"] = str(spark.home)  # this pyspark's scripts and jars, not another Spark's
        with open(log, "ab") as out:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True, preexec_fn=_die_with_parent)
        return cls(proc, port, log)

    def wait_ready(self, timeout_s: float, spark: Pyspark) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            code = self.proc.poll()
            if code is not None:
                raise LaunchError(failure_reason(self.log.read_text(errors="replace"), self.port, spark, code))
            if _listens(self.proc.pid, self.port) is not False and _accepts(self.port):
                return
            if time.monotonic() > deadline:
                self.stop()
                raise LaunchError(f"the server did not accept connections on port {self.port} within "
                                  f"{timeout_s:.0f} s; see {self.log}")
            time.sleep(0.25)

    def stop(self) -> int | None:
        """Ends the server's process group: SIGTERM, then SIGKILL after :data:`STOP_GRACE_S`."""
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
        self._signal(signal.SIGKILL)  # whatever is left of the group (children of the JVM)
        code = self.proc.wait()
        deadline = time.monotonic() + 10
        while self.group_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        return code

    def group_alive(self) -> bool:
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


class _Stop(Exception):
    """Raised in the main thread by SIGINT or SIGTERM."""


def _raise_stop(signum, frame):  # noqa: ARG001
    """The first SIGINT or SIGTERM stops the launcher; later ones are ignored while it stops."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)
    raise _Stop(signal.Signals(signum).name)


def _parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(
        prog=_PROG, description="Starts a Spark Connect server with lmspark for the installed pyspark and prints "
                                "its sc:// URL once it accepts connections. Ctrl-C or SIGTERM stops it.",
        epilog="Arguments after -- go to spark-submit (e.g. -- --conf spark.driver.memory=4g --jars more.jar); "
               "--jars, --packages, spark.sql.extensions and spark.sql.extendedExplainProviders are merged "
               "with lmspark's.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the gRPC port (default {DEFAULT_PORT})")
    p.add_argument("--master", default="local[*]", help="the Spark master (default local[*])")
    p.add_argument("--log", type=Path, help="the server's log file (default: a file in the temporary folder)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help=f"seconds to wait for the server to accept connections (default {DEFAULT_TIMEOUT_S:.0f})")
    return p.parse_args(argv), extra


def _say(msg: str) -> None:
    print(f"lmspark.connect: {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None, spark: Pyspark | None = None) -> int:
    opts, extra = _parse(list(sys.argv[1:] if argv is None else argv))
    server = None
    previous = {s: signal.signal(s, _raise_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        spark = spark or Pyspark.installed()
        cmd = server_command(spark, opts.port, opts.master, extra)
        check_port_free(opts.port)
        log = opts.log or Path(tempfile.gettempdir()) / f"lmspark-connect-{opts.port}.log"
        try:
            log.write_text("")
        except OSError as e:
            raise LaunchError(f"cannot write the server's log {log}: {e.strerror}") from None
        server = Server.start(cmd, spark, opts.port, log)
        _say(f"starting Spark {spark.version} with lmspark {__version__} on port {opts.port} "
             f"(pid {server.proc.pid}); log: {log}")
        server.wait_ready(opts.timeout, spark)
        print(f"sc://localhost:{opts.port}", flush=True)
        _say("ready; Ctrl-C or SIGTERM stops the server")
        code = server.proc.wait()
        raise LaunchError(f"the server stopped by itself (exit code {code}); see {log}")
    except LaunchError as e:
        if server is not None:
            server.stop()
        _say(str(e))
        return 2
    except _Stop as e:
        if server is not None:
            _say(f"{e}: stopping the server")
            server.stop()
        return 0
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


if __name__ == "__main__":
    sys.exit(main())
