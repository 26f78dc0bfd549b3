"""lmspark's Parquet scans read back from the text of ``EXPLAIN EXTENDED``, for Spark Connect
clients, which have no JVM to ask.

From Spark 4.0 on, the lmspark section (``lmspark.plan.LmExplain``, when the server names it in
``spark.sql.extendedExplainProviders``) lists every scan whole::

    LmParquetScan: <table or paths>
    Spark scan (lmspark fallback): <table or paths>
      reason: <reason>

Without it (Spark 3.5), the physical plan's scan lines are read: ``LmParquetScan [...]`` and a
``FileScan`` whose ``Format`` says ``Parquet [lmspark fallback: <reasons>]``. Spark cuts metadata
values at ``spark.sql.maxMetadataStringLength`` characters (100 by default), so there a long
reason or path ends in ``...``.
"""

from __future__ import annotations

import re

SECTION = "== Extended Information (lmspark) =="
_SERVED = "LmParquetScan: "
_DECLINED = "Spark scan (lmspark fallback): "
_REASON = "  reason: "
_FALLBACK = "Parquet [lmspark fallback: "
_FORMAT = re.compile(r"Format: (.*?)(?:, (?:Location|PartitionFilters|PushedFilters|ReadSchema): |$)")
#: The root paths of ``Location: InMemoryFileIndex(1 paths)[file:/t]``, or their beginning and ``...``
#: where Spark cut the value.
_LOCATION = re.compile(r"Location: \w+(?:\(\d+ paths?\))?\[(.*?)(?:\]|(?<=\.\.\.))(?=, |$)")

#: One scan: (table or paths, served by lmspark, reasons it was not).
Scan = tuple[str, bool, tuple[str, ...]]


def scans_of_explain(text: str) -> list[Scan]:
    """Every Parquet scan lmspark served or declined in an ``EXPLAIN EXTENDED`` text, once each."""
    scans = _from_section(text) if SECTION in text else _from_plan(text)
    return list(dict.fromkeys(scans))


def _from_section(text: str) -> list[Scan]:
    section = text.split(SECTION, 1)[1]
    out: list[list] = []
    for line in section.splitlines():
        if line.startswith("== "):  # the next provider's section
            break
        if line.startswith(_SERVED):
            out.append([line[len(_SERVED):].strip(), True, []])
        elif line.startswith(_DECLINED):
            out.append([line[len(_DECLINED):].strip(), False, []])
        elif line.startswith(_REASON) and out and not out[-1][1]:
            out[-1][2].append(line[len(_REASON):].strip())
    return [(table, served, tuple(reasons)) for table, served, reasons in out]


def _from_plan(text: str) -> list[Scan]:
    plan = text.split("== Physical Plan ==", 1)[-1]
    out = []
    for line in plan.splitlines():
        location = _LOCATION.search(line)
        table = location.group(1) if location else ""
        if "LmParquetScan [" in line or line.strip().startswith("LmParquetScan"):
            out.append((table, True, ()))
            continue
        fmt = _FORMAT.search(line)
        if fmt and fmt.group(1).startswith(_FALLBACK):
            value = fmt.group(1)[len(_FALLBACK):]
            value = value[:-1] if value.endswith("]") else value  # else cut short, ending in "..."
            out.append((table, False, tuple(r.strip() for r in value.split("; ") if r.strip())))
    return out
