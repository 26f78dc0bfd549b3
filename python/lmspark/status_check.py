"""``lmspark.status(spark)``: whether the Spark that runs a session's queries has lmspark loaded and
enabled, for a classic session and a Spark Connect client alike.

It asks only what a Connect client can ask: the session's confs (``SET`` and ``SET -v``) and, to
say why lmspark is configured but not loaded, the text of ``EXPLAIN EXTENDED``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import conf as _conf
from .lines import LINES_WITH_EXPLAIN_PROVIDERS, UnsupportedSparkError, line_of
from .sessions import is_connect

_EXTENSION = "lmspark.LmSparkExtensions"
_EXPLAIN_PROVIDER = "lmspark.plan.LmExplain"
#: The heading Spark gives the lmspark section of EXPLAIN EXTENDED (lmspark.plan.LmExplain).
EXPLAIN_SECTION = "== Extended Information (lmspark) =="


@dataclass(frozen=True)
class Status:
    """What the Spark behind a session does with lmspark.

    ``loaded``: lmspark's extension was injected (its flags are registered: ``SET -v`` lists them),
    which also means the jar matches the server's Spark line. ``enabled``: ``spark.lmspark.enabled``
    in this session. ``unknown_flags``: ``spark.lmspark.*`` keys set that are no flag, each with the
    closest flag; while one is set, lmspark refuses to plan Parquet scans.
    """

    spark_version: str
    connect: bool
    configured: bool
    loaded: bool
    enabled: bool
    explain_section: bool
    unknown_flags: dict = field(default_factory=dict)
    reason: str = ""

    @property
    def active(self) -> bool:
        """True when lmspark serves this session's Parquet scans (where it can read them)."""
        return self.loaded and self.enabled and not self.unknown_flags

    def __str__(self) -> str:
        where = "the Spark Connect server" if self.connect else "this session's Spark"
        head = (f"lmspark is active on {where} (Spark {self.spark_version})" if self.active
                else f"lmspark is not active on {where} (Spark {self.spark_version}): {self.reason}")
        if self.active and not self.explain_section and _line(self.spark_version) in LINES_WITH_EXPLAIN_PROVIDERS:
            head += (f"; EXPLAIN EXTENDED has no lmspark section (spark.sql.extendedExplainProviders does not "
                     f"name {_EXPLAIN_PROVIDER})")
        return head


def _line(version: str) -> str:
    try:
        return line_of(version)
    except UnsupportedSparkError:
        return version


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def closest_flag(key: str) -> str:
    """The lmspark flag nearest to ``key`` (case-insensitive edit distance), as LmConf names it."""
    return min(_conf.DEFAULTS, key=lambda k: _edit_distance(k.lower(), key.lower()))


def unknown_flags(settings: dict[str, str]) -> dict[str, str]:
    """The ``spark.lmspark.*`` keys of ``settings`` that are no flag, each with the closest flag."""
    return {k: closest_flag(k) for k in sorted(settings) if k.startswith("spark.lmspark.") and k not in _conf.DEFAULTS}


def _items(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _explain_section(spark) -> str | None:
    """The lmspark section of ``EXPLAIN EXTENDED`` of a query without a scan, or None."""
    try:
        text = spark.sql("EXPLAIN EXTENDED SELECT 1").collect()[0][0]
    except Exception:  # noqa: BLE001 - a provider Spark cannot load fails EXPLAIN EXTENDED
        return None
    if EXPLAIN_SECTION not in text:
        return None
    return text.split(EXPLAIN_SECTION, 1)[1].strip()


def status(spark) -> Status:
    """Whether lmspark is loaded and enabled where ``spark``'s queries run (classic or Spark
    Connect), with the reason when it is not active. ``str()`` of the result is one line."""
    version = spark.version
    settings = {r[0]: r[1] for r in spark.sql("SET").collect()}
    registered = spark.sql("SET -v").where(f"key = '{_conf.ENABLED}'").collect()
    configured = _EXTENSION in _items(settings.get("spark.sql.extensions"))
    provider = _EXPLAIN_PROVIDER in _items(settings.get("spark.sql.extendedExplainProviders"))
    loaded = bool(registered)
    enabled = loaded and str(registered[0][1]).strip().lower() == "true"
    unknown = unknown_flags(settings)
    connect = is_connect(spark)
    fix = ("start the server with `python -m lmspark.connect`, or with --jars <the lmspark jar of its Spark line> "
           f"--conf spark.sql.extensions={_EXTENSION}" if connect else "build the session with lmspark.enable_lm")
    if not loaded and not configured:
        reason = f"spark.sql.extensions does not name {_EXTENSION}: {fix}"
    elif not loaded:
        jars = [j for j in _items(settings.get("spark.jars")) if "lmspark" in j]
        reason = (f"spark.sql.extensions names {_EXTENSION} but its flags are not registered: the lmspark jar "
                  f"is not on the class path ({'spark.jars: ' + ', '.join(jars) if jars else 'no lmspark jar in spark.jars'})"
                  f", or it is not the jar of Spark {_line(version)}")
        section = _explain_section(spark) if provider else None
        if section and section != "no Parquet scans":
            reason += f" ({section})"
    elif not enabled:
        reason = f"{_conf.ENABLED} is {registered[0][1]} in this session"
    elif unknown:
        reason = ("; ".join(f"{k} is not an lmspark flag (did you mean {c}?)" for k, c in unknown.items())
                  + ": lmspark refuses to plan Parquet scans until it is unset")
    else:
        reason = ""
    return Status(version, connect, configured, loaded, enabled, provider, unknown, reason)
