"""The ``spark.lmspark.*`` config flags. Generated from LmConf.scala by ``make docs``; do not edit."""

#: Replace Spark's Parquet scan with lmspark's scan. Can be switched per session at run time; when false, queries are planned exactly as vanilla Spark plans them.
#: Default: true.
ENABLED = "spark.lmspark.enabled"

#: Rows per ColumnarBatch produced by lmspark's reader.
#: Default: 4096.
BATCH_SIZE = "spark.lmspark.batchSize"

#: Every flag and its default, as strings.
DEFAULTS = {
    "spark.lmspark.enabled": "true",
    "spark.lmspark.batchSize": "4096",
}
