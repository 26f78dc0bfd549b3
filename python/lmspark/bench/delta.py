"""The Delta Lake copy of ``lineitem_default`` (the data set ``lineitem_delta``) and the Spark settings
that read it.

``lineitem_delta`` is ``lineitem_default`` written by Delta with deletion vectors on, then 10 % of its
rows deleted by a ``DELETE`` (rows whose hash of ``(l_orderkey, l_linenumber)`` is 0 mod 10, spread
over every file): Delta marks them in deletion vectors and rewrites no data file. Delta's jars come
from ``make delta-jars LINE=<line>`` (``.cache/delta/<line>``), on a Spark line with a Delta release.

Run as ``python -m lmspark.bench.delta SOURCE DEST`` to generate (the benchmark does it in a child
process, so that its own process holds no JVM).
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The rows the benchmark's DELETE removes (10 %).
DELETED = "pmod(xxhash64(l_orderkey, l_linenumber), 10) = 0"


def jars_dir(line: str) -> Path:
    from .data import _repo_root

    return _repo_root() / ".cache" / "delta" / line


def session_conf(line: str) -> dict[str, str]:
    """Delta's jars, session extension and catalog for a session of ``line``; raises when the jars
    are missing."""
    jars = sorted(str(p) for p in jars_dir(line).glob("*.jar"))
    if not jars:
        raise FileNotFoundError(f"no Delta jars in {jars_dir(line)}: run `make delta-jars LINE={line}`")
    return {
        "spark.jars": ",".join(jars),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    }


def generate(source: Path, dest: Path, line: str) -> None:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("lmspark-bench-delta-gen")
    for k, v in {**session_conf(line), "spark.driver.memory": "6g", "spark.ui.enabled": "false",
                 "spark.databricks.delta.properties.defaults.enableDeletionVectors": "true"}.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    try:
        # One Delta file per source file, rows in the source's order.
        files = sorted(str(p) for p in Path(source).glob("*.parquet"))
        spark.read.parquet(*files).coalesce(len(files)).write.format("delta").save(str(dest))
        spark.sql(f"DELETE FROM delta.`{dest}` WHERE {DELETED}")
        dvs = list(Path(dest).glob("deletion_vector_*.bin"))
        if not dvs:
            raise RuntimeError(f"the DELETE on {dest} wrote no deletion vector")
    finally:
        spark.stop()


if __name__ == "__main__":
    import pyspark

    generate(Path(sys.argv[1]), Path(sys.argv[2]), ".".join(pyspark.__version__.split(".")[:2]))
