"""The Spark lines lmspark ships a jar for, and which one serves the installed pyspark.

One jar per line sits in ``lmspark/jars/``: ``lmspark-spark<line>_<scala>-<version>.jar``. The
table below is the Python copy of ``project/spark-lines.txt`` (a test checks that they agree).
"""

from __future__ import annotations

#: Spark line -> the Scala binary version its pyspark ships.
SCALA_OF_LINE = {"3.5": "2.12", "4.0": "2.13", "4.1": "2.13", "4.2": "2.13", "4.3": "2.13"}

#: The lines whose Spark has ``spark.sql.extendedExplainProviders`` (the lmspark EXPLAIN section).
LINES_WITH_EXPLAIN_PROVIDERS = frozenset({"4.0", "4.1", "4.2", "4.3"})


class UnsupportedSparkError(RuntimeError):
    """The installed Spark is not a line lmspark ships a jar for."""


def line_of(version: str) -> str:
    """The line (major.minor) of a Spark version string such as ``4.3.0`` or ``4.1.0.dev1``."""
    parts = version.split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        raise UnsupportedSparkError(f"cannot read a Spark line from version {version!r}")
    return f"{parts[0]}.{parts[1]}"


def supported_line(version: str) -> str:
    """The line that serves Spark ``version``; raises :class:`UnsupportedSparkError` naming the
    supported lines when there is none."""
    line = line_of(version)
    if line not in SCALA_OF_LINE:
        raise UnsupportedSparkError(
            f"lmspark supports Spark {', '.join(SCALA_OF_LINE)}; the installed pyspark is {version}. "
            "Install a supported pyspark (e.g. pip install 'pyspark==4.3.*'), or run without lmspark."
        )
    return line


def jar_name(line: str, version: str) -> str:
    """The file name of a line's jar, e.g. ``lmspark-spark4.3_2.13-0.1.0.jar``."""
    return f"lmspark-spark{line}_{SCALA_OF_LINE[line]}-{version}.jar"
