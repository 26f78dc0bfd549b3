"""What lmspark did for a DataFrame: ``lmspark.explain(df)`` and ``lmspark.metrics(df)``.

In a classic session both read the DataFrame's executed plan through lmspark's JVM helper
(``lmspark.plan.LmReport``), so callers need no py4j or knowledge of Spark's plan classes;
per-file reasons and metrics are complete after an action has run. A Spark Connect client has no
JVM: there ``explain`` reads the text of ``EXPLAIN EXTENDED`` (:mod:`lmspark.explain_text`), which
names each scan and its reasons but not per-file ones, and ``metrics`` is empty.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .sessions import is_connect


@dataclass(frozen=True)
class ScanReport:
    """One Parquet scan: served by lmspark or not, and why not."""

    table: str
    served: bool
    reasons: tuple[str, ...] = ()
    #: Reasons the scan's tasks handed files to Spark's reader, with the number of files.
    file_reasons: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Explanation:
    """lmspark's part in a query: whether lmspark is active in the session, and every Parquet scan."""

    active: bool
    scans: tuple[ScanReport, ...] = ()
    inactive_reason: str = ""

    @property
    def served(self) -> bool:
        """True when lmspark serves at least one scan of the query."""
        return any(s.served for s in self.scans)

    @property
    def reasons(self) -> list[str]:
        """Every reason lmspark gave, for whole scans and for single files."""
        out = [r for s in self.scans for r in s.reasons]
        out += [f"{r} ({n} file{'s' if n != 1 else ''})" for s in self.scans for r, n in s.file_reasons.items()]
        return out

    def __str__(self) -> str:
        if not self.active:
            return f"lmspark is not active: {self.inactive_reason}"
        if not self.scans:
            return "no Parquet scans"
        lines = []
        for s in self.scans:
            lines.append(f"{'LmParquetScan' if s.served else 'Spark scan (lmspark fallback)'}: {s.table}")
            lines += [f"  reason: {r}" for r in s.reasons]
            lines += [f"  {n} file(s) to Spark's reader: {r}" for r, n in s.file_reasons.items()]
        return "\n".join(lines)


def _report(df):
    """lmspark's JVM report object, or None when the session has no lmspark classes."""
    jvm = df.sparkSession._jvm
    try:
        gate = jvm.lmspark.SparkLineGate
        gate.builtLine()  # raises when the class is absent (py4j gives a JavaPackage)
        return jvm.lmspark.plan.LmReport, gate
    except Exception:  # noqa: BLE001
        return None, None


def explain(df) -> Explanation:
    """Whether lmspark serves ``df``'s Parquet scans, and every reason where it does not
    (including the per-file ones, after an action, in a classic session)."""
    if is_connect(df):
        return _explain_connect(df)
    report, gate = _report(df)
    if report is None:
        return Explanation(active=False, inactive_reason="the lmspark jar is not loaded in this session "
                                                         "(build it with lmspark.enable_lm before it starts)")
    mismatch = gate.mismatch(gate.runningVersion())
    if mismatch:
        return Explanation(active=False, inactive_reason=mismatch)
    data = json.loads(report.explainJson(df._jdf.queryExecution().executedPlan()))
    scans = tuple(ScanReport(table=s["table"], served=s["served"], reasons=tuple(s["reasons"]),
                             file_reasons={k: int(v) for k, v in s["fileReasons"].items()})
                  for s in data["scans"])
    return Explanation(active=True, scans=scans)


def _explain_connect(df) -> Explanation:
    from .explain_text import scans_of_explain
    from .status_check import status

    st = status(df.sparkSession)
    if not st.loaded:
        return Explanation(active=False, inactive_reason=st.reason)
    scans = tuple(ScanReport(table=table, served=served, reasons=reasons)
                  for table, served, reasons in scans_of_explain(df._explain_string(mode="extended")))
    return Explanation(active=True, scans=scans)


def metrics(df) -> dict[str, int]:
    """lmspark's scan metrics for ``df``, summed over its lmspark scans (``scans``: how many), after
    an action has run; empty when lmspark is not active, and for a Spark Connect DataFrame (the
    metrics stay on the server)."""
    if is_connect(df):
        return {}
    report, _ = _report(df)
    if report is None:
        return {}
    return {k: int(v) for k, v in json.loads(report.metricsJson(df._jdf.queryExecution().executedPlan())).items()}
