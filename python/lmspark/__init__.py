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

__all__ = ["enable_lm", "jar_path", "conf", "__version__", "EXTENSION_CLASS", "EXPLAIN_PROVIDER_CLASS"]

_HERE = Path(__file__).resolve().parent
__version__ = (_HERE / "VERSION").read_text().strip()

#: The class named in ``spark.sql.extensions``.
EXTENSION_CLASS = "lmspark.LmSparkExtensions"
#: The class named in ``spark.sql.extendedExplainProviders``: the lmspark section of EXPLAIN EXTENDED.
EXPLAIN_PROVIDER_CLASS = "lmspark.plan.LmExplain"

B = TypeVar("B")


def jar_path() -> str:
    """The path of the lmspark jar shipped inside this package.

    ``LMSPARK_JAR`` in the environment overrides it (for development builds).
    """
    override = os.environ.get("LMSPARK_JAR")
    if override:
        return str(Path(override).resolve())
    jar = _HERE / "jars" / f"lmspark-{__version__}.jar"
    if not jar.is_file():
        raise FileNotFoundError(
            f"lmspark jar not found at {jar}; build it with `make jar` (or set LMSPARK_JAR)"
        )
    return str(jar)


def _append(builder, key: str, value: str, sep: str = ",") -> None:
    current = builder._options.get(key)  # the builder's own options: keep what the user set
    items = [v.strip() for v in str(current).split(sep) if v.strip()] if current else []
    if value not in items:
        items.append(value)
    builder.config(key, sep.join(items))


def enable_lm(builder: B) -> B:
    """Adds lmspark to a ``SparkSession.Builder`` and returns the builder.

    Appends the packaged jar to ``spark.jars``, ``lmspark.LmSparkExtensions`` to
    ``spark.sql.extensions`` and lmspark's EXPLAIN section to
    ``spark.sql.extendedExplainProviders``, keeping the values already set on the builder.
    Switch lmspark off per session at run time with
    ``spark.conf.set("spark.lmspark.enabled", "false")``.
    """
    _append(builder, "spark.jars", jar_path())
    _append(builder, "spark.sql.extensions", EXTENSION_CLASS)
    _append(builder, "spark.sql.extendedExplainProviders", EXPLAIN_PROVIDER_CLASS)
    return builder
