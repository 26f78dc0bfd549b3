"""lmspark: a faster Parquet scan for Apache Spark, switched on with one line.

>>> from pyspark.sql import SparkSession
>>> from lmspark import enable_lm
>>> spark = enable_lm(SparkSession.builder).getOrCreate()
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

from . import conf
from .report import Explanation, ScanReport, explain, metrics
from .sessions import connect_target
from .status_check import Status, status
from .lines import LINES_WITH_EXPLAIN_PROVIDERS, SCALA_OF_LINE, UnsupportedSparkError, jar_name, supported_line

__all__ = ["enable_lm", "jar_path", "spark_line", "explain", "metrics", "status", "Explanation", "ScanReport", "Status", "conf",
           "__version__", "EXTENSION_CLASS", "EXPLAIN_PROVIDER_CLASS", "UnsupportedSparkError", "SessionAlreadyRunningError",
           "RemoteSessionError", "SUPPORTED_LINES"]

_HERE = Path(__file__).resolve().parent
__version__ = (_HERE / "VERSION").read_text().strip()

#: The class named in ``spark.sql.extensions``.
EXTENSION_CLASS = "lmspark.LmSparkExtensions"
#: The class named in ``spark.sql.extendedExplainProviders``: the lmspark section of EXPLAIN EXTENDED.
EXPLAIN_PROVIDER_CLASS = "lmspark.plan.LmExplain"

#: The Spark lines this package ships a jar for.
SUPPORTED_LINES = tuple(SCALA_OF_LINE)

B = TypeVar("B")


class SessionAlreadyRunningError(RuntimeError):
    """``enable_lm`` was called while a SparkContext already runs in this process."""


class RemoteSessionError(RuntimeError):
    """``enable_lm`` was given a Spark Connect builder: lmspark must be loaded by the server."""


def _pyspark_version() -> str:
    import pyspark

    return pyspark.__version__


def spark_line(version: str | None = None) -> str:
    """The Spark line whose jar serves the installed pyspark (or ``version``), e.g. ``"4.3"``.

    Raises :class:`UnsupportedSparkError`, naming the supported lines, when no jar does.
    """
    return supported_line(version or _pyspark_version())


def jar_path(version: str | None = None) -> str:
    """The path of the lmspark jar for the installed pyspark's line (or ``version``'s), shipped
    inside this package.

    ``LMSPARK_JAR`` in the environment overrides it (for development builds).
    """
    override = os.environ.get("LMSPARK_JAR")
    if override:
        return str(Path(override).resolve())
    line = spark_line(version)
    jar = _HERE / "jars" / jar_name(line, __version__)
    if not jar.is_file():
        shipped = sorted(p.name for p in (_HERE / "jars").glob("*.jar")) if (_HERE / "jars").is_dir() else []
        raise FileNotFoundError(
            f"this lmspark package has no jar for Spark {line} ({jar.name}); it has: "
            f"{', '.join(shipped) or 'no jars'}. Install the lmspark wheel, which carries every line's jar "
            "(from a source checkout: `make wheel`)."
        )
    return str(jar)


def _append(builder, key: str, value: str, sep: str = ",") -> None:
    current = builder._options.get(key)  # the builder's own options: keep what the user set
    items = [v.strip() for v in str(current).split(sep) if v.strip()] if current else []
    if value not in items:
        items.append(value)
    builder.config(key, sep.join(items))


def _check_no_running_session() -> None:
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        raise SessionAlreadyRunningError(
            "enable_lm must be called before the first SparkSession of this Python process starts: a "
            "SparkContext is already running, and Spark cannot add lmspark's jar to it. Call spark.stop() "
            "and build the session again with enable_lm(SparkSession.builder)...getOrCreate(), or start "
            f"Python with `--jars {jar_path()} --conf spark.sql.extensions={EXTENSION_CLASS}` "
            "(e.g. in PYSPARK_SUBMIT_ARGS). The running session was left as it was."
        )


def _check_not_remote(builder) -> None:
    target = connect_target(builder)
    if target is None:
        return
    try:
        jar = jar_path()
    except (UnsupportedSparkError, FileNotFoundError):
        jar = "<the lmspark jar of the server's Spark line>"
    providers = (f" (and `--conf spark.sql.extendedExplainProviders={EXPLAIN_PROVIDER_CLASS}` for the lmspark "
                 "section of EXPLAIN, from Spark 4.0 on)")
    raise RemoteSessionError(
        f"enable_lm cannot add lmspark to a Spark Connect session ({target}): the scan runs on the Connect "
        "server, which must load lmspark when it starts. Start one with `python -m lmspark.connect [--port N]` "
        "and connect to the sc:// URL it prints; for a server started otherwise (start-connect-server.sh, a "
        f"cluster's), start it with `--jars {jar}` (or spark.jars) and `--conf spark.sql.extensions="
        f"{EXTENSION_CLASS}`{providers}. Build the session without enable_lm, e.g. "
        "SparkSession.builder.remote(url).getOrCreate(), and check it with lmspark.status(spark). The builder "
        "was left as it was."
    )


def enable_lm(builder: B) -> B:
    """Adds lmspark to a ``SparkSession.Builder`` and returns the builder.

    Appends the jar of the installed pyspark's line to ``spark.jars``, ``lmspark.LmSparkExtensions``
    to ``spark.sql.extensions`` and, on lines that have it, lmspark's EXPLAIN section to
    ``spark.sql.extendedExplainProviders``, keeping the values already set on the builder.
    Switch lmspark off per session at run time with
    ``spark.conf.set("spark.lmspark.enabled", "false")``.

    Raises :class:`UnsupportedSparkError` on a Spark line lmspark has no jar for,
    :class:`SessionAlreadyRunningError` when a SparkContext already runs (Spark could no longer
    load the jar), and :class:`RemoteSessionError` for a Spark Connect builder (the server must load
    lmspark: ``python -m lmspark.connect``); the builder is left untouched then.
    """
    _check_not_remote(builder)
    line = spark_line()
    jar = jar_path()
    _check_no_running_session()
    _append(builder, "spark.jars", jar)
    _append(builder, "spark.sql.extensions", EXTENSION_CLASS)
    if line in LINES_WITH_EXPLAIN_PROVIDERS:
        _append(builder, "spark.sql.extendedExplainProviders", EXPLAIN_PROVIDER_CLASS)
    return builder
