"""The lmspark benchmark: lmspark beside vanilla Spark, Comet, DuckDB and DataFusion in one run.

Run it with ``python -m lmspark.bench`` (``make bench``). Modules: ``data`` (the data sets),
``queries`` (every query's SQL), ``engines`` (the engines and their settings), ``worker`` (runs one
engine in its own process), ``report`` (CSV, markdown summary, charts) and ``run`` (the driver).
"""
