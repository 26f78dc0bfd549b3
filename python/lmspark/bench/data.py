"""The benchmark's data sets: generated once per scale factor, seeded, cached outside git.

Every data set lives in ``<cache>/sf<N>/<name>/`` as Parquet files, with a marker file
``<cache>/sf<N>/<name>.json`` beside the folder that records the generator and its parameters.
A data set whose marker is missing or differs (another scale, another generator version) is
generated again; anything else is reused as it is.

1. ``lineitem_default`` -- TPC-H ``lineitem`` exactly as ``tpchgen-cli parquet`` writes it
   (parquet-rs, SNAPPY, dictionary encoding, ~7 MiB row groups, page indexes, decimals as INT64),
   in ``l_orderkey`` order. For SF > 1 it is split with ``--parts`` into ``round(SF)`` files of
   about SF 1 each (tpchgen's rows are the same; only the file boundaries differ). TPC-H data is
   deterministic: the same scale factor gives the same rows on every machine.
2. ``lineitem_sorted`` -- the same rows sorted by ``l_shipdate`` (ties broken by ``l_orderkey``,
   ``l_linenumber`` so the order is total), sorted out of core by DuckDB (memory limit, spill
   folder in the cache) and written by pyarrow into one file: ``write_page_index=True``,
   ``store_decimal_as_integer=True`` (DECIMAL(15,2) as INT64), row groups of 1,048,576 rows,
   at most 20,000 rows per page, SNAPPY, the original (non-null) schema.
3. ``wide`` -- a synthetic table of 40 columns and ``2,000,000 x SF`` rows (20M at SF 10),
   written by pyarrow in row groups of 1,048,576 rows, pages of at most 20,000 rows, page
   indexes, SNAPPY. Generated chunk by chunk from ``numpy.random.default_rng(SEED + chunk)``,
   so it is reproducible and needs little memory:

   - ``id`` bigint, 0..N-1 in order;
   - ``sel_clustered`` double = ``id / N``: sorted, so ``sel_clustered < t`` selects a
     contiguous fraction ``t`` of the rows;
   - ``sel_random`` double = ``perm(id) / N`` for a seeded permutation: the same values,
     shuffled, so ``sel_random < t`` selects the same fraction ``t`` scattered everywhere;
   - ``i32_0..i32_7`` int (ranges from 0..9 to the full int range; ``i32_7`` 5% null);
   - ``i64_0..i64_5`` bigint (small ranges, large ranges, a monotone one);
   - ``f64_0..f64_7`` double (uniform, normal, rounded to cents, few distinct values;
     ``f64_7`` 5% null);
   - ``s_low_0..s_low_5`` string with 3, 7, 25, 100, 500 and 1000 distinct values (dictionary
     encoded; ``s_low_5`` 5% null);
   - ``s_high_0..s_high_4`` string, nearly unique, 10 to ~45 characters (``s_high_3`` URL-like;
     ``s_high_4`` 5% null);
   - ``d_0..d_3`` date between 1990 and 2030 (``d_3`` 5% null).
4. ``orders_nested`` -- TPC-H ``orders`` with its lineitems nested in it (view ``orders_nested``):
   one row per order (1.5M x SF), in ``o_orderkey`` order, with

   - the nine ``o_*`` columns as ``tpchgen-cli`` writes them (non-null; decimals as INT64);
   - ``customer`` struct<c_custkey, c_name, c_address, c_nationkey, c_phone, c_acctbal,
     c_mktsegment, c_comment>: the order's customer;
   - ``lineitems`` array<struct<l_linenumber, l_partkey, l_suppkey, l_quantity, l_extendedprice,
     l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate,
     l_shipinstruct, l_shipmode, l_comment>>: the order's lineitems (1 to 7, 4 on average) in
     ``l_linenumber`` order (``l_orderkey`` dropped).

   ``customer``, ``lineitems`` and everything inside them are nullable (optional in Parquet, as
   Spark and DuckDB write nested data), though no value is null. Made from ``lineitem_default``
   (generated first if missing) and ``tpchgen-cli``'s ``orders`` and ``customer``, split like
   ``lineitem_default`` into ``round(SF)`` parts: part by part (one orders part of about SF 1
   each, its lineitems found by ``l_orderkey`` range), DuckDB joins the customer and nests the
   lineitems (``list(struct_pack(...) ORDER BY l_linenumber)``), and pyarrow writes that part
   into its own file: row groups of 131,072 orders (about 0.5M lineitems), at most 20,000 rows
   per page, page indexes, SNAPPY. Memory stays that of one part (SF 1) whatever the scale.

``GENERATOR_VERSION`` is part of every marker: bump it when the generated data changes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

GENERATOR_VERSION = 1
SEED = 20240611
WIDE_ROWS_PER_SF = 2_000_000
ROW_GROUP_ROWS = 1_048_576
PAGE_ROWS = 20_000
#: Orders per row group of ``orders_nested``: with its ~4 lineitems and its customer an order takes
#: some 200 to 250 bytes in the file, so a row group is about 25 to 30 MB (about 0.5M lineitems).
NESTED_ROW_GROUP_ROWS = 131_072

DATASETS = ("lineitem_default", "lineitem_sorted", "wide", "orders_nested", "lineitem_delta")

#: What the benchmark runs without ``--datasets``: ``lineitem_delta`` needs a line with a Delta release.
DEFAULT_DATASETS = ("lineitem_default", "lineitem_sorted", "wide", "orders_nested")

#: ``orders_nested``: the fields of its ``customer`` struct and of its ``lineitems`` elements.
CUSTOMER_FIELDS = ("c_custkey", "c_name", "c_address", "c_nationkey", "c_phone", "c_acctbal",
                   "c_mktsegment", "c_comment")
LINEITEM_FIELDS = ("l_linenumber", "l_partkey", "l_suppkey", "l_quantity", "l_extendedprice", "l_discount",
                   "l_tax", "l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate", "l_receiptdate",
                   "l_shipinstruct", "l_shipmode", "l_comment")


@dataclass(frozen=True)
class Dataset:
    name: str
    path: Path  # a folder of .parquet files
    table: str  # the temp view / table name the queries use


def scale_tag(scale: float) -> str:
    """``10`` -> ``'10'``, ``0.1`` -> ``'0.1'``: used in folder and result file names."""
    return f"{scale:g}"


def default_cache_dir() -> Path:
    env = os.environ.get("LMSPARK_CACHE")
    if env:
        return Path(env) / "bench"
    return _repo_root() / ".cache" / "bench"


def _repo_root() -> Path:
    here = Path(__file__).resolve()
    for p in here.parents:
        if (p / "Makefile").is_file() and (p / "python").is_dir():
            return p
    return Path.cwd()


def tests_jar(line: str) -> Path:
    """The jar of lmspark's test classes for ``line`` (``make jar-tests``), which holds the simulated
    object store's file system."""
    from .. import lines

    return _repo_root() / "target" / "jars" / f"lmspark-tests-spark{line}_{lines.SCALA_OF_LINE[line]}.jar"


def wide_rows(scale: float) -> int:
    return max(1000, int(round(WIDE_ROWS_PER_SF * scale)))


def table_name(dataset: str) -> str:
    if dataset in ("wide", "orders_nested"):
        return dataset
    return "lineitem"


def _params(name: str, scale: float) -> dict:
    p = {"dataset": name, "scale": scale, "generator_version": GENERATOR_VERSION, "seed": SEED}
    if name == "lineitem_default":
        p["tpchgen"] = _tpchgen_version()
        p["parts"] = lineitem_parts(scale)
    elif name == "lineitem_sorted":
        p["tpchgen"] = _tpchgen_version()
        p.update(row_group_rows=ROW_GROUP_ROWS, page_rows=PAGE_ROWS, sort="l_shipdate,l_orderkey,l_linenumber")
    elif name == "wide":
        p.update(rows=wide_rows(scale), row_group_rows=ROW_GROUP_ROWS, page_rows=PAGE_ROWS)
    elif name == "lineitem_delta":
        from . import delta

        p["tpchgen"] = _tpchgen_version()
        p.update(parts=lineitem_parts(scale), deleted=delta.DELETED, deletion_vectors=True)
    elif name == "orders_nested":
        p["tpchgen"] = _tpchgen_version()
        p.update(parts=lineitem_parts(scale), row_group_rows=NESTED_ROW_GROUP_ROWS, page_rows=PAGE_ROWS)
    return p


def lineitem_parts(scale: float) -> int:
    return max(1, int(round(scale))) if scale > 1 else 1


def _tpchgen_exe() -> str:
    exe = Path(sys.executable).parent / "tpchgen-cli"
    return str(exe) if exe.exists() else (shutil.which("tpchgen-cli") or "tpchgen-cli")


def _tpchgen_version() -> str:
    try:
        out = subprocess.run([_tpchgen_exe(), "--version"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except Exception as e:  # noqa: BLE001 - recorded, the generation step reports the real error
        return f"unknown ({e})"


def ensure_datasets(
    names: list[str], scale: float, cache_dir: Path, log: Callable[[str], None] = print
) -> dict[str, Dataset]:
    """Generates whatever is missing or stale, and returns every requested data set."""
    root = Path(cache_dir) / f"sf{scale_tag(scale)}"
    root.mkdir(parents=True, exist_ok=True)
    need = [n for n in names if n != "lineitem_default"]
    if len(need) < len(names) or any(n in need for n in ("lineitem_sorted", "orders_nested", "lineitem_delta")):
        need.insert(0, "lineitem_default")  # first: the sorted layout, the nested orders and the Delta copy are made from it
    out = {}
    for name in need:
        folder = root / name
        marker = root / f"{name}.json"
        params = _params(name, scale)
        if marker.is_file() and folder.is_dir():
            try:
                if json.loads(marker.read_text()).get("params") == params:
                    out[name] = Dataset(name, folder, table_name(name))
                    continue
            except ValueError:
                pass
        log(f"generating {name} at SF {scale_tag(scale)} into {folder} ...")
        t0 = time.perf_counter()
        if marker.exists():
            marker.unlink()
        if folder.exists():
            shutil.rmtree(folder)
        tmp = root / f".{name}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        if name == "lineitem_default":
            _gen_lineitem_default(scale, tmp)
        elif name == "lineitem_sorted":
            _gen_lineitem_sorted(out["lineitem_default"].path, tmp, root)
        elif name == "wide":
            _gen_wide(wide_rows(scale), tmp)
        elif name == "orders_nested":
            _gen_orders_nested(scale, out["lineitem_default"].path, tmp, root)
        elif name == "lineitem_delta":
            tmp.rmdir()  # Delta makes the table's folder
            subprocess.run([sys.executable, "-m", "lmspark.bench.delta", str(out["lineitem_default"].path), str(tmp)],
                           check=True)
        else:
            raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
        tmp.rename(folder)
        secs = time.perf_counter() - t0
        marker.write_text(json.dumps({"params": params, "seconds": round(secs, 1)}, indent=2) + "\n")
        log(f"generated {name} in {secs:.1f} s")
        out[name] = Dataset(name, folder, table_name(name))
    return {n: out[n] for n in names}


# --- lineitem ------------------------------------------------------------------------------


def _gen_lineitem_default(scale: float, dest: Path) -> None:
    parts = lineitem_parts(scale)
    cmd = [_tpchgen_exe(), "parquet", "-s", f"{scale:g}", "--tables", "lineitem", "-o", str(dest), "--no-progress", "-q"]
    if parts > 1:
        cmd += ["--parts", str(parts)]
    subprocess.run(cmd, check=True)
    # tpchgen writes <dest>/lineitem.parquet, or <dest>/lineitem/lineitem.<i>.parquet with --parts
    sub = dest / "lineitem"
    if sub.is_dir():
        for f in sub.iterdir():
            f.rename(dest / f.name)
        sub.rmdir()


def _gen_lineitem_sorted(src: Path, dest: Path, root: Path) -> None:
    import duckdb
    import pyarrow.parquet as pq

    spill = root / ".duckdb_spill"
    spill.mkdir(exist_ok=True)
    schema = pq.read_schema(sorted(src.glob("*.parquet"))[0])
    schema = schema.remove_metadata()
    con = duckdb.connect()
    try:
        con.execute("SET threads=2")
        con.execute("SET memory_limit='6GB'")
        con.execute("SET preserve_insertion_order=true")
        con.execute(f"SET temp_directory='{spill}'")
        reader = con.sql(
            f"SELECT * FROM read_parquet('{src}/*.parquet') ORDER BY l_shipdate, l_orderkey, l_linenumber"
        ).to_arrow_reader(ROW_GROUP_ROWS)
        _write_row_groups(reader, dest / "part-00000.parquet", schema, ROW_GROUP_ROWS, lambda t: t.cast(schema))
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def _write_row_groups(reader, path: Path, schema, rows: int, convert) -> int:
    """Writes the batches of the Arrow ``reader`` to ``path`` (SNAPPY, page indexes, decimals as
    integers, pages of at most ``PAGE_ROWS`` rows) in row groups of exactly ``rows`` rows but the
    last, each table passed through ``convert`` first; returns the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    written = 0
    with pq.ParquetWriter(path, schema, compression="snappy", write_page_index=True,
                          store_decimal_as_integer=True, max_rows_per_page=PAGE_ROWS) as w:
        buf: list = []
        n = 0
        for batch in reader:
            buf.append(batch)
            n += batch.num_rows
            while n >= rows:
                t = pa.Table.from_batches(buf)
                w.write_table(convert(t.slice(0, rows)), row_group_size=rows)
                rest = t.slice(rows)
                buf, n = rest.to_batches(), rest.num_rows
                written += rows
        if n:
            w.write_table(convert(pa.Table.from_batches(buf)), row_group_size=rows)
            written += n
    return written


# --- orders_nested -------------------------------------------------------------------------


def _orders_nested_schema():
    """The schema ``orders_nested`` is written with: the order columns as tpchgen types them (non-null),
    then the nullable ``customer`` struct and ``lineitems`` list."""
    import pyarrow as pa

    dec = pa.decimal128(15, 2)
    types = {
        "o_orderkey": pa.int64(), "o_custkey": pa.int64(), "o_orderstatus": pa.string(), "o_totalprice": dec,
        "o_orderdate": pa.date32(), "o_orderpriority": pa.string(), "o_clerk": pa.string(),
        "o_shippriority": pa.int32(), "o_comment": pa.string(),
        "c_custkey": pa.int64(), "c_name": pa.string(), "c_address": pa.string(), "c_nationkey": pa.int64(),
        "c_phone": pa.string(), "c_acctbal": dec, "c_mktsegment": pa.string(), "c_comment": pa.string(),
        "l_linenumber": pa.int32(), "l_partkey": pa.int64(), "l_suppkey": pa.int64(), "l_quantity": dec,
        "l_extendedprice": dec, "l_discount": dec, "l_tax": dec, "l_returnflag": pa.string(),
        "l_linestatus": pa.string(), "l_shipdate": pa.date32(), "l_commitdate": pa.date32(),
        "l_receiptdate": pa.date32(), "l_shipinstruct": pa.string(), "l_shipmode": pa.string(),
        "l_comment": pa.string(),
    }
    orders = ("o_orderkey", "o_custkey", "o_orderstatus", "o_totalprice", "o_orderdate", "o_orderpriority",
              "o_clerk", "o_shippriority", "o_comment")
    customer = pa.struct([pa.field(c, types[c]) for c in CUSTOMER_FIELDS])
    item = pa.struct([pa.field(c, types[c]) for c in LINEITEM_FIELDS])
    return pa.schema([pa.field(c, types[c], False) for c in orders]
                     + [pa.field("customer", customer), pa.field("lineitems", pa.list_(pa.field("element", item)))])


def _gen_orders_nested(scale: float, lineitem: Path, dest: Path, root: Path) -> None:
    import duckdb

    parts = lineitem_parts(scale)
    src = root / ".orders_nested_src"
    spill = root / ".duckdb_spill"
    for d in (src, spill):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    schema = _orders_nested_schema()
    try:
        cmd = [_tpchgen_exe(), "parquet", "-s", f"{scale:g}", "--tables", "orders,customer", "-o", str(src),
               "--no-progress", "-q"]
        if parts > 1:
            cmd += ["--parts", str(parts)]
        subprocess.run(cmd, check=True)
        # <src>/orders.parquet, or <src>/orders/orders.<i>.parquet with --parts (likewise customer)
        orders = sorted(src.rglob("orders*.parquet"))
        customers = sorted(str(f) for f in src.rglob("customer*.parquet"))
        con = duckdb.connect()
        try:
            con.execute("SET threads=2")
            con.execute("SET memory_limit='6GB'")
            con.execute(f"SET temp_directory='{spill}'")
            # the parts in key order (file names sort 1, 10, 2, ...); each a contiguous o_orderkey range
            ranges = sorted(
                (con.execute(f"SELECT min(o_orderkey), max(o_orderkey), count(*) FROM read_parquet('{f}')").fetchall()[0], f)
                for f in orders
            )
            items = ", ".join(f"{c} := {c}" for c in LINEITEM_FIELDS)
            cust = ", ".join(f"{c} := c.{c}" for c in CUSTOMER_FIELDS)
            for i, ((lo, hi, count), f) in enumerate(ranges):
                sql = f"""
                    WITH li AS (
                        SELECT l_orderkey, list(struct_pack({items}) ORDER BY l_linenumber) AS lineitems
                        FROM read_parquet('{lineitem}/*.parquet') WHERE l_orderkey BETWEEN {lo} AND {hi}
                        GROUP BY l_orderkey)
                    SELECT o.*, struct_pack({cust}) AS customer, li.lineitems
                    FROM read_parquet('{f}') o
                    JOIN read_parquet({customers!r}) c ON c.c_custkey = o.o_custkey
                    LEFT JOIN li ON li.l_orderkey = o.o_orderkey
                    ORDER BY o.o_orderkey"""
                reader = con.sql(sql).to_arrow_reader(NESTED_ROW_GROUP_ROWS)
                written = _write_row_groups(reader, dest / f"part-{i:05d}.parquet", schema, NESTED_ROW_GROUP_ROWS,
                                            lambda t: _as_nested(t, schema))
                if written != count:
                    raise RuntimeError(f"orders_nested part {i}: wrote {written} orders of {count} in {f}")
        finally:
            con.close()
    finally:
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(spill, ignore_errors=True)


def _as_nested(t, schema):
    """DuckDB's Arrow output cast to ``schema`` (list element names, nullability); every order has
    lineitems, so a null list means a lost join."""
    if t.column("lineitems").null_count:
        raise RuntimeError("orders_nested: an order without lineitems")
    return t.cast(schema)


# --- wide ----------------------------------------------------------------------------------

_LOW_CARD = (3, 7, 25, 100, 500, 1000)
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")


def _wide_schema():
    import pyarrow as pa

    f = [pa.field("id", pa.int64(), False), pa.field("sel_clustered", pa.float64(), False),
         pa.field("sel_random", pa.float64(), False)]
    f += [pa.field(f"i32_{i}", pa.int32(), i == 7) for i in range(8)]
    f += [pa.field(f"i64_{i}", pa.int64(), False) for i in range(6)]
    f += [pa.field(f"f64_{i}", pa.float64(), i == 7) for i in range(8)]
    f += [pa.field(f"s_low_{i}", pa.string(), i == 5) for i in range(6)]
    f += [pa.field(f"s_high_{i}", pa.string(), i == 4) for i in range(5)]
    f += [pa.field(f"d_{i}", pa.date32(), i == 3) for i in range(4)]
    return pa.schema(f)


def _wide_chunk(start: int, count: int, total: int, perm, chunk_no: int):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(SEED + 1 + chunk_no)
    ids = np.arange(start, start + count, dtype=np.int64)
    cols = {"id": pa.array(ids), "sel_clustered": pa.array(ids / total),
            "sel_random": pa.array(perm[start:start + count] / total)}

    def nulls():
        return rng.random(count) < 0.05

    i32_ranges = (10, 100, 1_000, 65_536, 1_000_000, 100_000_000, 2**31 - 1, 50_000)
    for i, hi in enumerate(i32_ranges):
        v = rng.integers(0, hi, count, dtype=np.int32)
        cols[f"i32_{i}"] = pa.array(v, mask=nulls() if i == 7 else None)
    cols["i64_0"] = pa.array(rng.integers(0, 1_000, count, dtype=np.int64))
    cols["i64_1"] = pa.array(rng.integers(0, 10**12, count, dtype=np.int64))
    cols["i64_2"] = pa.array(rng.integers(-(2**62), 2**62, count, dtype=np.int64))
    cols["i64_3"] = pa.array(ids * 7 + rng.integers(0, 7, count, dtype=np.int64))  # monotone
    cols["i64_4"] = pa.array(rng.integers(0, 50, count, dtype=np.int64) * 1_000_000)
    cols["i64_5"] = pa.array(rng.integers(1_600_000_000_000, 1_800_000_000_000, count, dtype=np.int64))
    cols["f64_0"] = pa.array(rng.random(count))
    cols["f64_1"] = pa.array(rng.normal(0.0, 1.0, count))
    cols["f64_2"] = pa.array(np.round(rng.random(count) * 10_000, 2))
    cols["f64_3"] = pa.array(rng.integers(0, 20, count) / 4.0)
    cols["f64_4"] = pa.array(rng.exponential(100.0, count))
    cols["f64_5"] = pa.array(rng.random(count) * 1e9)
    cols["f64_6"] = pa.array(np.round(rng.normal(50.0, 10.0, count), 1))
    cols["f64_7"] = pa.array(rng.random(count), mask=nulls())
    for i, card in enumerate(_LOW_CARD):
        vocab = pa.array([f"{_WORDS[j % len(_WORDS)]}_{j:04d}" for j in range(card)])
        idx = pa.array(rng.integers(0, card, count, dtype=np.int32))
        v = pc.take(vocab, idx)
        if i == 5:
            v = pc.if_else(pa.array(nulls()), pa.scalar(None, pa.string()), v)
        cols[f"s_low_{i}"] = v
    for i in range(5):
        n = rng.integers(0, 10 ** (8 + 2 * i), count, dtype=np.int64)
        prefix = pa.array(np.array(_WORDS)[rng.integers(0, len(_WORDS), count)])
        s = pc.binary_join_element_wise(prefix, pc.cast(pa.array(n), pa.string()), "-")
        if i == 3:  # a long, URL-like string with a shared prefix
            s = pc.binary_join_element_wise(pa.scalar("https://example.com/item"), s, "/")
        if i == 4:
            s = pc.if_else(pa.array(nulls()), pa.scalar(None, pa.string()), s)
        cols[f"s_high_{i}"] = s
    base = 7305  # 1990-01-01 in days since the epoch
    span = 14_610  # 40 years
    for i in range(4):
        v = (base + rng.integers(0, span, count, dtype=np.int32)).astype(np.int32)
        cols[f"d_{i}"] = pa.array(v, mask=nulls() if i == 3 else None).cast(pa.date32())
    return pa.table(cols).cast(_wide_schema())


def _gen_wide(rows: int, dest: Path) -> None:
    import numpy as np
    import pyarrow.parquet as pq

    perm = np.random.default_rng(SEED).permutation(rows).astype(np.int64)
    schema = _wide_schema()
    with pq.ParquetWriter(
        dest / "part-00000.parquet",
        schema,
        compression="snappy",
        write_page_index=True,
        max_rows_per_page=PAGE_ROWS,
    ) as w:
        for chunk_no, start in enumerate(range(0, rows, ROW_GROUP_ROWS)):
            count = min(ROW_GROUP_ROWS, rows - start)
            w.write_table(_wide_chunk(start, count, rows, perm, chunk_no), row_group_size=ROW_GROUP_ROWS)


def describe(ds: Dataset) -> dict:
    """Rows, files, row groups and bytes of a data set (for the summary)."""
    import pyarrow.parquet as pq

    files = sorted(ds.path.glob("*.parquet"))  # a Delta table's data files hold its deleted rows too
    rows = rgs = 0
    for f in files:
        md = pq.ParquetFile(f).metadata
        rows += md.num_rows
        rgs += md.num_row_groups
    size = sum(f.stat().st_size for f in files)
    return {"rows": rows, "files": len(files), "row_groups": rgs, "bytes": size}


if __name__ == "__main__":  # python -m lmspark.bench.data SCALE [CACHE]
    sc = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1
    cd = Path(sys.argv[2]) if len(sys.argv) > 2 else default_cache_dir()
    for d in ensure_datasets(list(DEFAULT_DATASETS), sc, cd).values():
        print(d.name, d.path, describe(d))
