"""The file and the queries of the memory test (``test_memory.py``), shared with its child sessions.

The file: ``ROW_GROUPS`` row groups of ``ROWS_PER_GROUP`` rows each, ``LONGS`` columns of random
longs, ``DOUBLES`` columns of random doubles in [0, 1) and one string column (the decimal text of
a random long), so that one row group holds more than 1 GiB of column chunk bytes.
"""

from __future__ import annotations

ROWS_PER_GROUP = 8 * 1024 * 1024
ROW_GROUPS = 2
LONGS = 10
DOUBLES = 6

COLUMNS = [f"l{i}" for i in range(LONGS)] + [f"d{i}" for i in range(DOUBLES)] + ["s"]
_ALL = ", ".join(COLUMNS)

#: Every query returns one row: a count and sums of Spark's 32-bit `hash`, so no sum overflows.
QUERIES = {
    # every column of every row
    "all_columns": f"SELECT count(*), sum(hash({_ALL})) FROM t",
    # a selective filter (about 1 row in 1,000 passes; no page or row group can be pruned on it):
    # the filter column first, the others for passing rows only
    "selective": f"SELECT count(*), sum(hash({_ALL})), min(l3), max(s) FROM t WHERE d0 < 0.001",
    # a filter half the rows pass, projecting two columns
    "half": "SELECT count(*), sum(hash(l1, s)) FROM t WHERE l0 > 0",
    # a plain count
    "count": "SELECT count(*) FROM t",
}
