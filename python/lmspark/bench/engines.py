"""The engines the benchmark compares, and how each one is set up.

An engine is a name, a kind (``spark``, ``duckdb`` or ``datafusion``) and its settings. Every Spark
engine runs in its own Python subprocess with its own fresh ``SparkSession`` (see ``worker.py``), so
lmspark and Comet never share a JVM and nothing leaks from one engine into the next.

Adding an lmspark ablation is one line in ``EXTRA_ABLATIONS`` (name -> conf overrides). Every flag of
the form ``spark.lmspark.<feature>.enabled`` in ``lmspark.conf.DEFAULTS`` (other than the master
switch ``spark.lmspark.enabled``) becomes the ablation ``lmspark-no-<feature>`` on its own, so a
new feature flag is benchmarked from the moment it exists.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .. import conf as lmconf

#: Session settings shared by every Spark engine.
SPARK_COMMON: dict[str, str] = {
    "spark.master": "local[2]",
    "spark.driver.memory": "6g",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}

#: Off-heap pool that Comet needs (its docs: Comet draws its memory from Spark's off-heap pool).
COMET_OFFHEAP = "4g"
COMET_VERSION = "1.0.0"
COMET_ARTIFACT = f"org.apache.datafusion:comet-spark-spark4.1_2.13:{COMET_VERSION}"
COMET_JAR_NAME = f"comet-spark-spark4.1_2.13-{COMET_VERSION}.jar"

#: Threads for the single-node references.
NATIVE_THREADS = 2

#: Extra lmspark ablations: engine name -> conf overrides on top of lmspark's defaults.
EXTRA_ABLATIONS: dict[str, dict[str, str]] = {
    # "lmspark-batch1024": {"spark.lmspark.batchSize": "1024"},
    # Every query as a first query: nothing of a file's metadata kept from the runs before.
    "lmspark-cold": {"spark.lmspark.metadataCache.maxBytes": "0"},
    # No decoded dictionary kept across queries (the metadata cache still on).
    "lmspark-nodictcache": {"spark.lmspark.metadataCache.dictionaryMaxBytes": "0"},
    # The dictionaries' bound before it became a tenth of the heap (2026-12-02): 32 MB.
    "lmspark-dict32m": {"spark.lmspark.metadataCache.dictionaryMaxBytes": "32m"},
    # The two selection strategies forced, against the default policy (a mask below the threshold).
    "lmspark-selectors": {"spark.lmspark.selection.policy": "selectors"},
    "lmspark-mask": {"spark.lmspark.selection.policy": "mask"},
    # No statistics used (nor the guarantees they give): no row group pruned by them, and a top-k's
    # first pass reads every row group in Spark's order.
    "lmspark-nostats": {"spark.lmspark.pruning.statistics.enabled": "false",
                        "spark.lmspark.pruning.guarantees.enabled": "false"},
}


@dataclass(frozen=True)
class Engine:
    name: str
    kind: str  # "spark" | "duckdb" | "datafusion"
    description: str
    lmspark: bool = False
    comet: bool = False
    conf: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "lmspark": self.lmspark, "comet": self.comet,
                "conf": dict(self.conf), "description": self.description}


_FEATURE_FLAG = re.compile(r"^spark\.lmspark\.([A-Za-z0-9_.]+)\.enabled$")


def ablation_flags(defaults: dict[str, str] | None = None) -> dict[str, str]:
    """``{engine name: flag}`` for every ``spark.lmspark.<feature>.enabled`` flag."""
    out = {}
    for key in (defaults if defaults is not None else lmconf.DEFAULTS):
        m = _FEATURE_FLAG.match(key)
        if m and key != lmconf.ENABLED:
            out[f"lmspark-no-{m.group(1).replace('.', '-')}"] = key
    return out


def _pyspark_version() -> str:
    try:
        import pyspark

        return pyspark.__version__
    except ImportError:
        return "(pyspark not installed)"


def all_engines() -> list[Engine]:
    engines = [
        Engine("vanilla", "spark", f"Spark {_pyspark_version()} as shipped: vectorized reader, filter pushdown on; no lmspark jar"),
        Engine("lmspark", "spark", "lmspark with its defaults", lmspark=True),
    ]
    for name, flag in ablation_flags().items():
        engines.append(Engine(name, "spark", f"lmspark with {flag}=false", lmspark=True, conf={flag: "false"}))
    for name, overrides in EXTRA_ABLATIONS.items():
        desc = ", ".join(f"{k}={v}" for k, v in overrides.items())
        engines.append(Engine(name, "spark", f"lmspark with {desc}", lmspark=True, conf=dict(overrides)))
    for on in (True, False):
        engines.append(Engine(
            f"comet-rowfilter-{'on' if on else 'off'}", "spark",
            f"Comet {COMET_VERSION} (Spark 4.1 build), spark.comet.parquet.rowFilterPushdown.enabled={str(on).lower()}",
            comet=True,
            conf={"spark.comet.parquet.rowFilterPushdown.enabled": str(on).lower()},
        ))
    engines.append(Engine("duckdb", "duckdb", f"DuckDB, {NATIVE_THREADS} threads"))
    engines.append(Engine("datafusion", "datafusion",
                          f"DataFusion, {NATIVE_THREADS} partitions, parquet pushdown_filters on"))
    return engines


def select(names: list[str] | None) -> list[Engine]:
    """The engines named (names or globs such as ``comet-*``), in the canonical order."""
    import fnmatch

    engines = all_engines()
    if not names:
        return engines
    known = [e.name for e in engines]
    for n in names:
        if not any(fnmatch.fnmatchcase(k, n) for k in known):
            raise SystemExit(f"unknown engine {n!r}; known: {', '.join(known)}")
    return [e for e in engines if any(fnmatch.fnmatchcase(e.name, n) for n in names)]


def comet_conf(jar: str) -> dict[str, str]:
    """Comet's settings, as its installation and tuning guides give them."""
    return {
        "spark.jars": jar,
        "spark.driver.extraClassPath": jar,
        "spark.executor.extraClassPath": jar,
        "spark.plugins": "org.apache.spark.CometPlugin",
        "spark.shuffle.manager": "org.apache.spark.sql.comet.execution.shuffle.CometShuffleManager",
        "spark.comet.enabled": "true",
        "spark.comet.exec.enabled": "true",
        "spark.comet.exec.shuffle.enabled": "true",
        "spark.memory.offHeap.enabled": "true",
        "spark.memory.offHeap.size": COMET_OFFHEAP,
    }


def ensure_comet_jar(cache_dir: Path) -> tuple[str | None, str | None]:
    """Fetches the Comet jar with Maven into ``<cache>/comet/`` once: ``(jar path, None)`` or
    ``(None, the error Maven gave)``."""
    line = ".".join(_pyspark_version().split(".")[:2])
    if line != "4.1":
        return None, f"Comet {COMET_VERSION} is built for Spark 4.1 only; this run is on Spark {line}"
    dest = Path(cache_dir) / "comet"
    jar = dest / COMET_JAR_NAME
    if jar.is_file():
        return str(jar), None
    mvn = shutil.which("mvn")
    if not mvn:
        return None, "mvn not found on PATH (needed to fetch the Comet jar)"
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [mvn, "-q", "-B", "-U", "dependency:copy", f"-Dartifact={COMET_ARTIFACT}", f"-DoutputDirectory={dest}"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except Exception as e:  # noqa: BLE001
        return None, f"{' '.join(cmd)} failed: {e}"
    if p.returncode == 0 and jar.is_file():
        return str(jar), None
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in (p.stdout + p.stderr).splitlines()]
    errs = [ln for ln in lines if "Could not" in ln or "not found" in ln or "Failed" in ln]
    msg = errs[0] if errs else (lines[-1] if lines else f"exit code {p.returncode}")
    return None, f"mvn dependency:copy -Dartifact={COMET_ARTIFACT} failed: {msg.strip()}"
