"""Run by run_wheel_test.sh inside a fresh virtualenv holding one pyspark and the lmspark wheel.

1. ``lmspark.spark_line()`` is the installed pyspark's line and its jar is inside the wheel.
2. The demo-style queries give equal answers with lmspark on and off (the reference: lmspark off,
   filter pushdown off), and lmspark's runs show ``LmParquetScan`` in their plans.
3. Another line's jar, handed to Spark by hand (``--jars``), steps aside: no ``LmParquetScan``, the
   same answers, and one warning that names the supported lines.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession

import lmspark

QUERIES = {
    "filter": "select id, k, s from t where k between 100 and 140 order by id",
    "aggregate": "select k % 7 as g, count(*) as n, sum(v) as sv from t where v > 0.25 group by k % 7 order by g",
    "string": "select count(*) as n, min(id) as lo from t where s like 'x1%'",
    "projection": "select s, v from t where id in (5, 77, 9001) order by s",
}


def write_table(spark: SparkSession, path: str) -> None:
    spark.range(0, 50_000, 1, 4).selectExpr(
        "id", "cast(id % 997 as int) as k", "concat('x', cast(id % 1234 as string)) as s",
        "cast((id * 7919) % 1000 as double) / 1000 as v").write.mode("overwrite").parquet(path)


def run_all(spark: SparkSession, path: str, lm: bool) -> dict:
    spark.conf.set("spark.lmspark.enabled", str(lm).lower())
    spark.conf.set("spark.sql.parquet.filterPushdown", str(lm).lower())
    spark.read.parquet(path).createOrReplaceTempView("t")
    out = {}
    for name, sql in QUERIES.items():
        df = spark.sql(sql)
        out[name] = ([tuple(r) for r in df.collect()], df._jdf.queryExecution().executedPlan().toString())
    return out


def main(line: str) -> None:
    assert lmspark.spark_line() == line, (lmspark.spark_line(), line, pyspark.__version__)
    jar = Path(lmspark.jar_path())
    assert jar.is_file() and jar.parent.name == "jars", jar
    shipped = sorted(p.name for p in jar.parent.glob("*.jar"))
    assert len(shipped) == len(lmspark.SUPPORTED_LINES), shipped
    print(f"pyspark {pyspark.__version__}: line {line}, jar {jar.name}; wheel carries {', '.join(shipped)}")

    path = tempfile.mkdtemp(prefix="lmspark-wheel-data-") + "/t"
    spark = lmspark.enable_lm(SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")).getOrCreate()
    try:
        write_table(spark, path)
        ref, lm = run_all(spark, path, lm=False), run_all(spark, path, lm=True)
        for name in QUERIES:
            assert lm[name][0] == ref[name][0], f"{name}: lmspark's answer differs from vanilla Spark's"
            assert "LmParquetScan" in lm[name][1], f"{name}: no LmParquetScan in the plan:\n{lm[name][1]}"
            assert "LmParquetScan" not in ref[name][1], name
            print(f"  {name}: {len(ref[name][0])} rows, equal, LmParquetScan")
    finally:
        spark.stop()

    other = next(p for p in shipped if not p.startswith(f"lmspark-spark{line}_"))
    child = subprocess.run([sys.executable, __file__, "--mismatched", str(jar.parent / other), path],
                           capture_output=True, text=True, timeout=600)
    sys.stdout.write(child.stdout)
    assert child.returncode == 0, child.stderr[-4000:]
    warnings = [l for l in child.stderr.splitlines() if "lmspark supports Spark" in l]
    assert len(warnings) == 1, f"expected one warning, got {len(warnings)}:\n" + "\n".join(warnings)
    assert all(l in warnings[0] for l in lmspark.SUPPORTED_LINES), warnings[0]
    print(f"  {other} on Spark {pyspark.__version__}: stepped aside with one warning")
    print("wheel test passed")


def mismatched(jar: str, path: str) -> None:
    """A session given another line's jar by hand: every query runs as vanilla Spark."""
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.jars", jar).config("spark.sql.extensions", lmspark.EXTENSION_CLASS).getOrCreate())
    try:
        spark.read.parquet(path).createOrReplaceTempView("t")
        for name, sql in QUERIES.items():
            df = spark.sql(sql)
            rows = df.collect()
            plan = df._jdf.queryExecution().executedPlan().toString()
            assert "LmParquetScan" not in plan, plan
            print(f"  {name}: {len(rows)} rows as vanilla Spark")
    finally:
        spark.stop()


if __name__ == "__main__":
    if sys.argv[1] == "--mismatched":
        mismatched(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1])
