"""Which kind of Spark session a builder, session or DataFrame belongs to: classic (a JVM in this
process, reached through py4j) or Spark Connect (a client of a server that runs the plans)."""

from __future__ import annotations

import os


def is_connect(obj) -> bool:
    """True for a Spark Connect session, DataFrame or builder (``pyspark.sql.connect``)."""
    return type(obj).__module__.startswith("pyspark.sql.connect.")


def _remote_only() -> bool:
    """pyspark-client (the package without Spark's jars): every session is a Connect client."""
    try:
        from pyspark.util import is_remote_only
    except ImportError:  # Spark 3.5
        return False
    return bool(is_remote_only())


def _api_mode(options: dict) -> str:
    """``classic`` or ``connect``, as pyspark 4.x picks it (3.5 has classic only, or spark.remote)."""
    try:
        from pyspark.util import default_api_mode
    except ImportError:  # Spark 3.5: no API modes
        return "classic"
    mode = str(options.get("spark.api.mode", os.environ.get("SPARK_API_MODE", ""))).lower()
    return mode if mode in ("classic", "connect") else default_api_mode()


def connect_target(builder) -> str | None:
    """What makes ``builder`` build a Spark Connect session instead of a classic one, as the user
    wrote it (e.g. ``spark.remote=sc://host:15002``), or None for a classic builder.

    Follows ``SparkSession.Builder.getOrCreate``: the builder's ``spark.remote`` or
    ``SPARK_REMOTE``, the API mode ``connect`` (4.0 on: ``spark.api.mode``, ``SPARK_API_MODE``, or
    pyspark's default, ``SPARK_CONNECT_MODE``), a
    Connect session already made in this process (``SPARK_CONNECT_MODE_ENABLED``), a Connect
    builder, or pyspark-client.
    """
    options = getattr(builder, "_options", None) or {}
    if "spark.remote" in options:
        return f"spark.remote={options['spark.remote']}"
    if os.environ.get("SPARK_REMOTE"):
        return f"SPARK_REMOTE={os.environ['SPARK_REMOTE']}"
    if _api_mode(options) == "connect":
        return "spark.api.mode=connect"
    if is_connect(builder):
        return f"a {type(builder).__module__}.{type(builder).__qualname__}"
    if os.environ.get("SPARK_CONNECT_MODE_ENABLED"):
        return "SPARK_CONNECT_MODE_ENABLED (a Spark Connect session was made in this process)"
    if _remote_only():
        return "pyspark-client (Spark Connect only)"
    return None
