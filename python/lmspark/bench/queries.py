"""Every benchmark query, by name: one short SQL text each, in this one place.

The lineitem queries run on both lineitem layouts (``lineitem_default``, ``lineitem_sorted``)
against the view ``lineitem``; the selectivity sweep runs on ``wide`` against the view ``wide``.
The SQL is written so that Spark, DuckDB and DataFusion all accept it as it is (date literals,
no intervals). ``{point_key}`` is filled in per scale factor with an ``l_orderkey`` that exists
(see :func:`point_key`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

LINEITEM_QUERIES: dict[str, str] = {
    # TPC-H Q1, as in the spec (date '1998-12-01' - interval '90' day = 1998-09-02).
    "q1": """
        SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,
               sum(l_extendedprice) AS sum_base_price,
               sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
               sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
               avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price,
               avg(l_discount) AS avg_disc, count(*) AS count_order
        FROM lineitem WHERE l_shipdate <= date '1998-09-02'
        GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus""",
    # TPC-H Q6.
    "q6": """
        SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem
        WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01'
          AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24""",
    # TPC-H Q12, lineitem side only (the join with orders dropped; its lineitem filters kept).
    "q12": """
        SELECT l_shipmode, count(*) AS line_count FROM lineitem
        WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate
          AND l_shipdate < l_commitdate AND l_receiptdate >= date '1994-01-01'
          AND l_receiptdate < date '1995-01-01'
        GROUP BY l_shipmode ORDER BY l_shipmode""",
    # TPC-H Q14, lineitem side only: the month's revenue (the join with part dropped).
    "q14": """
        SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue FROM lineitem
        WHERE l_shipdate >= date '1995-09-01' AND l_shipdate < date '1995-10-01'""",
    # TPC-H Q19, lineitem side only: its lineitem predicates (the part predicates dropped).
    "q19": """
        SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue FROM lineitem
        WHERE l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON'
          AND ((l_quantity >= 1 AND l_quantity <= 11) OR (l_quantity >= 10 AND l_quantity <= 20)
               OR (l_quantity >= 20 AND l_quantity <= 30))""",
    "point_star": "SELECT * FROM lineitem WHERE l_orderkey = {point_key}",
    "month_star": """
        SELECT * FROM lineitem
        WHERE l_shipdate >= date '1995-03-01' AND l_shipdate < date '1995-04-01'""",
    "dict_eq_star": "SELECT * FROM lineitem WHERE l_shipmode = 'AIR' AND l_quantity = 1",
    "full_star": "SELECT * FROM lineitem",
    "like_comment": "SELECT l_orderkey, l_comment FROM lineitem WHERE l_comment LIKE '%special requests%'",
    "count_filter": "SELECT count(*) AS n FROM lineitem WHERE l_quantity < 10 AND l_returnflag = 'R'",
    "topn_star": "SELECT * FROM lineitem ORDER BY l_extendedprice DESC LIMIT 10",
}

#: The selectivities of the sweep on ``wide``.
SELECTIVITIES: tuple[float, ...] = (1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0)


def _sel_name(column: str, sel: float) -> str:
    return f"sel_{column}_{sel:g}"


#: ``sel_clustered_1e-05`` ... ``sel_random_1``: ``select * where sel_X < t``.
WIDE_QUERIES: dict[str, str] = {
    _sel_name(col, s): f"SELECT * FROM wide WHERE sel_{col} < {s:.1e}"  # a double literal everywhere
    for col in ("clustered", "random")
    for s in SELECTIVITIES
}

#: Which queries run on which data set.
QUERIES_BY_DATASET: dict[str, dict[str, str]] = {
    "lineitem_default": LINEITEM_QUERIES,
    "lineitem_sorted": LINEITEM_QUERIES,
    "wide": WIDE_QUERIES,
}


def point_key(scale: float) -> int:
    """An ``l_orderkey`` in the middle of the key range that exists at every scale factor.

    TPC-H uses the first 8 of every 32 order keys, so ``32 * k + 1`` always exists.
    """
    max_key = int(6_000_000 * scale)  # 1.5M x SF orders, keys spread over 4x that range
    return (max_key // 2 // 32) * 32 + 1


def selectivity(query: str) -> tuple[str, float] | None:
    """``('clustered', 0.001)`` for ``sel_clustered_0.001``; None for other queries."""
    if not query.startswith("sel_"):
        return None
    _, col, s = query.split("_", 2)
    return col, float(s)


@dataclass(frozen=True)
class Cell:
    dataset: str
    query: str
    sql: str


def plan(datasets: list[str], patterns: list[str] | None, scale: float) -> list[Cell]:
    """The (dataset, query) pairs to run, in a stable order; ``patterns`` are names or globs."""
    cells = []
    for ds in datasets:
        for name, sql in QUERIES_BY_DATASET[ds].items():
            if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
                continue
            text = " ".join(sql.split()).format(point_key=point_key(scale))
            cells.append(Cell(ds, name, text))
    return cells


def all_query_names() -> list[str]:
    seen: dict[str, None] = {}
    for qs in QUERIES_BY_DATASET.values():
        for n in qs:
            seen[n] = None
    return list(seen)
