"""Generates the codec test fixtures in this directory with pyarrow, an independent Parquet writer.

    /work/main/.venv/bin/python jvm/src/test/resources/gen_codec_fixtures.py [corpus_data_dir]

Writes, from one seeded table:
  codecs/brotli_v1.parquet, codecs/brotli_v2.parquet  BROTLI pages (data page v1 / v2), which
                                                      parquet-java cannot write
  codecs/lz4raw_arrow.parquet                         LZ4_RAW pages; the JVM test also relabels its
                                                      codec as LZ4 to get the raw-block LZ4 pages
                                                      old parquet-cpp / pyarrow wrote
  codecs/values.csv                                   the table's values, the tests' oracle

and, when the parquet-testing corpus is found, pyarrow's reading of corpus files that parquet-java
cannot read, as oracles for the JVM tests:
  codecs/corpus_non_hadoop_lz4_compressed.csv
  codecs/corpus_large_string_map_brotli.csv           per map entry: key length, SHA-256 of the
                                                      key (each key is 1 GiB), value

CSV conventions: a header row of column names; `null` for null; strings and binaries as lowercase
hex of their bytes (so `null` cannot be a value); doubles as Python's repr (round-trips exactly);
booleans as true/false.
"""

import csv
import hashlib
import os
import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "codecs")
ROWS = 600
ROW_GROUP = 350  # two row groups: 350 and 250 rows
PAGE_SIZE = 1024  # several data pages per chunk


def table():
    r = random.Random(20240611)
    words = ["alpha", "beta", "", "gamma", "\u00e9t\u00e9", "\u6f22\u5b57", "delta-epsilon"]

    def maybe(p_null, v):
        return None if r.random() < p_null else v

    i32 = [maybe(0.2, r.randint(-2**31, 2**31 - 1)) for _ in range(ROWS)]
    i64 = [r.randint(-2**63, 2**63 - 1) for _ in range(ROWS)]
    f64 = [maybe(0.1, r.uniform(-1e6, 1e6)) for _ in range(ROWS)]
    word = [maybe(0.3, r.choice(words)) for _ in range(ROWS)]
    text = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(r.randint(0, 8)))
            for _ in range(ROWS)]
    flag = [maybe(0.1, r.random() < 0.5) for _ in range(ROWS)]
    return pa.table({
        "i32": pa.array(i32, pa.int32()),
        "i64": pa.array(i64, pa.int64()),
        "f64": pa.array(f64, pa.float64()),
        "word": pa.array(word, pa.string()),
        "text": pa.array(text, pa.string()),
        "flag": pa.array(flag, pa.bool_()),
    }, schema=pa.schema([
        pa.field("i32", pa.int32()),
        pa.field("i64", pa.int64(), nullable=False),
        pa.field("f64", pa.float64()),
        pa.field("word", pa.string()),
        pa.field("text", pa.string(), nullable=False),
        pa.field("flag", pa.bool_()),
    ]))


def cell(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, str):
        return v.encode("utf-8").hex()
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write_csv(path, names, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(names)
        for row in rows:
            w.writerow([cell(v) for v in row])


def write(t, name, **kw):
    # Dictionary encoding for the low-cardinality columns only; the others are PLAIN.
    pq.write_table(t, os.path.join(OUT, name), row_group_size=ROW_GROUP, data_page_size=PAGE_SIZE,
                   write_batch_size=50, use_dictionary=["word", "i32"], write_statistics=False, **kw)


def fixtures():
    os.makedirs(OUT, exist_ok=True)
    t = table()
    write(t, "brotli_v1.parquet", compression="BROTLI", data_page_version="1.0")
    write(t, "brotli_v2.parquet", compression="BROTLI", data_page_version="2.0")
    write(t, "lz4raw_arrow.parquet", compression="LZ4_RAW", data_page_version="1.0")
    # The oracle is what pyarrow reads back from one of the files it wrote, which must equal the table.
    back = pq.read_table(os.path.join(OUT, "brotli_v1.parquet"))
    assert back.equals(t), "pyarrow does not read back what it wrote"
    write_csv(os.path.join(OUT, "values.csv"), t.column_names, zip(*(c.to_pylist() for c in t.columns)))


def corpus(data):
    t = pq.read_table(os.path.join(data, "non_hadoop_lz4_compressed.parquet"))
    write_csv(os.path.join(OUT, "corpus_non_hadoop_lz4_compressed.csv"), t.column_names,
              zip(*(c.to_pylist() for c in t.columns)))
    rows = []
    pf = pq.ParquetFile(os.path.join(data, "large_string_map.brotli.parquet"))
    for batch in pf.iter_batches(batch_size=1):
        for entries in batch.column(0).to_pylist():
            for key, value in entries:
                k = key.encode("utf-8")
                rows.append((len(k), hashlib.sha256(k).hexdigest(), value))
                del k
    with open(os.path.join(OUT, "corpus_large_string_map_brotli.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["key_length", "key_sha256", "value"])
        for n, h, v in rows:
            w.writerow([n, h, cell(v)])


def main():
    fixtures()
    candidates = sys.argv[1:] or [
        "/work/shared/corpus/parquet-testing/data",
        os.path.join(HERE, "../../../../../shared/corpus/parquet-testing/data"),
    ]
    for c in candidates:
        if os.path.exists(os.path.join(c, "non_hadoop_lz4_compressed.parquet")):
            corpus(c)
            break
    else:
        print("parquet-testing corpus not found; corpus oracles not regenerated", file=sys.stderr)


if __name__ == "__main__":
    main()
