"""Every benchmark query, by name: one short SQL text each, in this one place.

The lineitem queries run on both lineitem layouts (``lineitem_default``, ``lineitem_sorted``)
against the view ``lineitem``; the selectivity sweep runs on ``wide`` against the view ``wide``;
the nested queries run on ``orders_nested`` against the view ``orders_nested``. The SQL is
written so that Spark, DuckDB and DataFusion all accept it as it is (date literals, no
intervals), except where no one text can serve them all: then ``ENGINE_SQL`` gives the text of
the engines that differ (only ``nested_explode``: Spark's ``explode`` is ``unnest`` in DuckDB and
DataFusion). ``{point_key}`` is filled in per scale factor with an ``l_orderkey`` that exists
(see :func:`point_key`), and ``{point_key_end}`` with ``point_key + NESTED_KEY_SPAN``.
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

#: ``nested_point``'s key range: TPC-H uses 8 of every 32 order keys, so 6,000 keys hold about 1,500
#: orders whatever the scale (1e-4 of the orders at SF 10).
NESTED_KEY_SPAN = 6_000

#: On ``orders_nested`` (orders with ``customer`` struct and ``lineitems`` array<struct>).
NESTED_QUERIES: dict[str, str] = {
    # A narrow o_orderkey range (about 1,500 orders) with each order's whole lineitem array.
    "nested_point": """
        SELECT o_orderkey, o_orderdate, lineitems FROM orders_nested
        WHERE o_orderkey >= {point_key} AND o_orderkey < {point_key_end}""",
    # A filter on two struct fields (about 2e-4 of the orders), one struct field in the output.
    "nested_struct_filter": """
        SELECT o_orderkey, o_totalprice, customer.c_name AS c_name FROM orders_nested
        WHERE customer.c_mktsegment = 'AUTOMOBILE' AND customer.c_acctbal > 9990""",
    # One week of orders (0.3 %), exploded, then a filter on the lineitem (l_quantity < 10: 18 %).
    "nested_explode": """
        SELECT o_orderkey, li.l_quantity AS l_quantity, li.l_extendedprice AS l_extendedprice
        FROM orders_nested LATERAL VIEW explode(lineitems) t AS li
        WHERE o_orderdate >= date '1995-03-01' AND o_orderdate < date '1995-03-08' AND li.l_quantity < 10""",
    # Every column of one month of orders (1.3 %).
    "nested_month_star": """
        SELECT * FROM orders_nested
        WHERE o_orderdate >= date '1995-03-01' AND o_orderdate < date '1995-04-01'""",
}

_NESTED_EXPLODE_UNNEST = """
    SELECT o_orderkey, li.l_quantity AS l_quantity, li.l_extendedprice AS l_extendedprice
    FROM (SELECT o_orderkey, unnest(lineitems) AS li FROM orders_nested
          WHERE o_orderdate >= date '1995-03-01' AND o_orderdate < date '1995-03-08') t
    WHERE li.l_quantity < 10"""

#: The one place where an engine gets its own SQL: query -> engine kind -> text (the same query;
#: the text above is the one every other engine runs). DuckDB and DataFusion have no ``LATERAL
#: VIEW`` / ``explode``; Spark has no ``unnest``.
ENGINE_SQL: dict[str, dict[str, str]] = {
    "nested_explode": {"duckdb": _NESTED_EXPLODE_UNNEST, "datafusion": _NESTED_EXPLODE_UNNEST},
}

#: Which queries run on which data set.
QUERIES_BY_DATASET: dict[str, dict[str, str]] = {
    "lineitem_default": LINEITEM_QUERIES,
    "lineitem_sorted": LINEITEM_QUERIES,
    "lineitem_delta": LINEITEM_QUERIES,
    "wide": WIDE_QUERIES,
    "orders_nested": NESTED_QUERIES,
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
    sql: str  # the text Spark (and every engine without a variant) runs
    variants: tuple[tuple[str, str], ...] = ()  # (engine kind, its text), from ENGINE_SQL

    def sql_for(self, kind: str) -> str:
        """The text the engine of this kind (``spark``, ``duckdb``, ``datafusion``) runs."""
        return dict(self.variants).get(kind, self.sql)


def _text(sql: str, scale: float) -> str:
    key = point_key(scale)
    return " ".join(sql.split()).format(point_key=key, point_key_end=key + NESTED_KEY_SPAN)


#: Queries outside the benchmark's set (and its geometric mean), run only when ``--queries`` names
#: them exactly.
EXTRA_QUERIES_BY_DATASET: dict[str, dict[str, str]] = {
    # A top-k on distinct keys that follow the file's order (the newest orders' lines).
    "lineitem_default": {
        "topn_key": "SELECT * FROM lineitem ORDER BY l_orderkey DESC, l_linenumber DESC LIMIT 10",
    },
}


def plan(datasets: list[str], patterns: list[str] | None, scale: float) -> list[Cell]:
    """The (dataset, query) pairs to run, in a stable order; ``patterns`` are names or globs
    (the extra queries only by their exact names)."""
    cells = []
    for ds in datasets:
        extra = {n: q for n, q in EXTRA_QUERIES_BY_DATASET.get(ds, {}).items() if patterns and n in patterns}
        for name, sql in {**QUERIES_BY_DATASET[ds], **extra}.items():
            if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
                continue
            variants = tuple((k, _text(v, scale)) for k, v in ENGINE_SQL.get(name, {}).items())
            cells.append(Cell(ds, name, _text(sql, scale), variants))
    return cells


def all_query_names() -> list[str]:
    seen: dict[str, None] = {}
    for qs in QUERIES_BY_DATASET.values():
        for n in qs:
            seen[n] = None
    return list(seen)
