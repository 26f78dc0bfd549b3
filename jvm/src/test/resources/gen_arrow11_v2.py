"""Writes nested/arrow11_v2_num_rows.parquet: data page v2 files as Arrow C++ before 12.0 wrote them.

    python -m venv /tmp/pa11 && /tmp/pa11/bin/pip install "pyarrow==11.0.0" "numpy<2"
    /tmp/pa11/bin/python jvm/src/test/resources/gen_arrow11_v2.py

Arrow C++ (pyarrow) 11 and earlier wrote each v2 page's level count into its `num_rows`
(apache/arrow#34086, fixed in 12.0), so in a repeated column `num_rows` is not the page's record
count. The table: 1,000 rows in row groups of 400, small pages (256 bytes), no page index (pyarrow
11 writes none): `id` int64, `l` list<int32> with null lists, empty lists and null elements,
`s` struct<a: int32, tags: list<string>>, `m` map<string, int64>. Seeded, so a rerun writes the
same values.
"""

import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq

assert pa.__version__.startswith("11."), f"needs pyarrow 11 (the writer with the bug), not {pa.__version__}"

r = random.Random(20261204)
n = 1000


def some_list(make, longest):
    k = r.random()
    if k < 0.1:
        return None
    if k < 0.2:
        return []
    return [None if r.random() < 0.1 else make() for _ in range(r.randint(1, longest))]


ids = list(range(n))
lists = [some_list(lambda: r.randint(-1000, 1000), 7) for _ in range(n)]
structs = [None if r.random() < 0.05 else {"a": r.randint(0, 9), "tags": some_list(lambda: f"t{r.randint(0, 40)}", 4)}
           for _ in range(n)]
maps = [None if r.random() < 0.1 else [(f"k{j}", r.randint(0, 10**9)) for j in range(r.randint(0, 5))] for _ in range(n)]
table = pa.table({
    "id": pa.array(ids, pa.int64()),
    "l": pa.array(lists, pa.list_(pa.int32())),
    "s": pa.array(structs, pa.struct([("a", pa.int32()), ("tags", pa.list_(pa.string()))])),
    "m": pa.array(maps, pa.map_(pa.string(), pa.int64())),
})
out = sys.argv[1] if len(sys.argv) > 1 else "jvm/src/test/resources/nested/arrow11_v2_num_rows.parquet"
pq.write_table(table, out, data_page_version="2.0", data_page_size=256, row_group_size=400, compression="snappy")
print(out, pq.ParquetFile(out).metadata.created_by)
