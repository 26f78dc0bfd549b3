"""Writes the benchmark's results: the CSV of every run, the markdown summary and the PNG charts."""

from __future__ import annotations

import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path

from .queries import selectivity

BASELINE = "vanilla"

#: The CSV's fixed columns; lmspark's SQL metrics follow as ``m_<metric>``, whatever it reports.
FIXED_COLUMNS = [
    "date", "spark_line", "scale", "dataset", "query", "engine", "run", "status", "seconds",
    "lm_scan", "lm_fallback", "scan_nodes", "result_rows", "plan_seconds", "error",
]


def write_csv(rows: list[dict], path: Path) -> list[str]:
    metric_cols = sorted({k for r in rows for k in r if k.startswith("m_")})
    cols = FIXED_COLUMNS + metric_cols
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: _csv_value(r.get(c)) for c in cols})
    return cols


def _csv_value(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6f}"
    if isinstance(v, bool):
        return "true" if v else "false"
    return v


# --- aggregation ------------------------------------------------------------------------------


def medians(rows: list[dict]) -> dict[tuple[str, str, str], float]:
    """(dataset, query, engine) -> median seconds over the successful timed runs."""
    times: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for r in rows:
        if r.get("status") == "ok" and r.get("seconds") is not None:
            times[(r["dataset"], r["query"], r["engine"])].append(float(r["seconds"]))
    return {k: statistics.median(v) for k, v in times.items()}


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _fmt_s(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 10 else f"{x:.2f}" if x < 100 else f"{x:.1f}"


def _fmt_r(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def summary_table(rows: list[dict], engines: list[str], cells: list[tuple[str, str]]) -> str:
    """The median table (seconds, and each engine's ratio to vanilla) ending with geometric means.

    A median over fewer timed runs than the others (the time limit left some out) shows its
    count in brackets, e.g. ``41.2 [2]``.
    """
    med = medians(rows)
    n_ok: dict = defaultdict(int)
    n_all: dict = defaultdict(int)
    for r in rows:
        k = (r["dataset"], r["query"], r["engine"])
        n_all[k] += 1
        n_ok[k] += r.get("status") == "ok"
    fell_back = {(r["dataset"], r["query"], r["engine"]) for r in rows
                 if r.get("lm_scan") is False and r.get("status") == "ok"}
    failed = {(r["dataset"], r["query"], r["engine"]) for r in rows if r.get("status") == "error"}
    has_base = BASELINE in engines
    head = ["dataset", "query"] + [f"{e} (s)" for e in engines]
    others = [e for e in engines if e != BASELINE] if has_base else []
    head += [f"{e} / {BASELINE}" for e in others]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|"]
    ratios: dict[str, list[float]] = defaultdict(list)
    secs: dict[str, list[float]] = defaultdict(list)
    for ds, q in cells:
        row = [ds, q]
        base = med.get((ds, q, BASELINE))
        for e in engines:
            v = med.get((ds, q, e))
            mark = " †" if (ds, q, e) in fell_back else (" ✗" if (ds, q, e) in failed and v is None else "")
            k = (ds, q, e)
            few = f" [{n_ok[k]}]" if v is not None and n_ok[k] < n_all[k] else ""
            row.append(_fmt_s(v) + few + mark)
            if v is not None:
                secs[e].append(v)
        for e in others:
            v = med.get((ds, q, e))
            r = v / base if (v is not None and base) else None
            if r is not None:
                ratios[e].append(r)
            row.append(_fmt_r(r))
        lines.append("| " + " | ".join(row) + " |")
    gm = ["**geometric mean**", ""] + [f"**{_fmt_s(geomean(secs[e]))}**" for e in engines]
    gm += [f"**{_fmt_r(geomean(ratios[e]))}**" for e in others]
    lines.append("| " + " | ".join(gm) + " |")
    return "\n".join(lines)


def geomean_table(rows: list[dict], engines: list[str], cells: list[tuple[str, str]]) -> str:
    """Per engine: geometric mean of its ratio to vanilla, overall and per data set."""
    med = medians(rows)
    datasets = list(dict.fromkeys(ds for ds, _ in cells))
    lines = ["| engine | all | " + " | ".join(datasets) + " |", "|---|" + "---:|" * (len(datasets) + 1)]
    for e in engines:
        if e == BASELINE:
            continue
        def gm(filter_ds):
            rs = []
            for ds, q in cells:
                if filter_ds and ds != filter_ds:
                    continue
                v, b = med.get((ds, q, e)), med.get((ds, q, BASELINE))
                if v is not None and b:
                    rs.append(v / b)
            return _fmt_r(geomean(rs))
        lines.append(f"| {e} | {gm(None)} | " + " | ".join(gm(d) for d in datasets) + " |")
    return "\n".join(lines)


def lm_metrics_table(rows: list[dict], engine: str, cells: list[tuple[str, str]],
                     metric_types: dict[str, str]) -> str | None:
    """lmspark's SQL metrics for its first timed run of each cell."""
    first = {}
    for r in rows:
        if r["engine"] == engine and r.get("status") == "ok" and (r["dataset"], r["query"]) not in first:
            first[(r["dataset"], r["query"])] = r
    cols = sorted({k for r in first.values() for k in r if k.startswith("m_")})
    if not cols:
        return None
    head = ["dataset", "query", "lm scan"] + [c[2:] for c in cols]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|" + "---:|" * len(cols)]
    for ds, q in cells:
        r = first.get((ds, q))
        if not r:
            continue
        used = "yes" if r.get("lm_scan") else f"no: {r.get('lm_fallback') or r.get('scan_nodes') or '?'}"
        lines.append("| " + " | ".join([ds, q, used] + [_metric(r.get(c), metric_types.get(c[2:])) for c in cols]) + " |")
    return "\n".join(lines)


def _metric(v, kind: str | None) -> str:
    if v is None or v == "":
        return ""
    v = int(v)
    if kind == "nsTiming":
        return f"{v / 1e9:.3f} s"
    if kind == "timing":
        return f"{v / 1e3:.3f} s"
    if kind == "size":
        return f"{v / 2**20:.1f} MiB"
    return f"{v:,}"


# --- charts -----------------------------------------------------------------------------------


def chart_ratios(rows: list[dict], engines: list[str], cells: list[tuple[str, str]], path: Path, title: str) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    med = medians(rows)
    others = [e for e in engines if e != BASELINE]
    if BASELINE not in engines or not others:
        return False
    datasets = list(dict.fromkeys(ds for ds, _ in cells))
    heights = [sum(1 for d, _ in cells if d == ds) for ds in datasets]
    fig, axes = plt.subplots(len(datasets), 1, figsize=(10, 1.2 + 0.33 * sum(heights) * max(1, len(others)) / 2),
                             gridspec_kw={"height_ratios": heights}, squeeze=False, sharex=True)
    bar_h = 0.8 / len(others)
    for ax, ds in zip(axes[:, 0], datasets):
        qs = [q for d, q in cells if d == ds]
        for i, e in enumerate(others):
            ys, xs = [], []
            for j, q in enumerate(qs):
                v, b = med.get((ds, q, e)), med.get((ds, q, BASELINE))
                if v is not None and b:
                    ys.append(j + (i - (len(others) - 1) / 2) * bar_h)
                    xs.append(v / b)
            ax.barh(ys, xs, height=bar_h, label=e, left=0)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yticks(range(len(qs)))
        ax.set_yticklabels(qs, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(ds, fontsize=10, loc="left")
        ax.grid(axis="x", which="both", alpha=0.3)
    axes[-1, 0].set_xlabel(f"median time / {BASELINE} median time (log; < 1 is faster)")
    axes[0, 0].legend(fontsize=8, loc="best")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def chart_selectivity(rows: list[dict], engines: list[str], path: Path, title: str) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    med = medians(rows)
    points: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for (ds, q, e), v in med.items():
        s = selectivity(q)
        if ds == "wide" and s:
            points[(s[0], e)].append((s[1], v))
    if not points:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, col in zip(axes, ("clustered", "random")):
        for e in engines:
            pts = sorted(points.get((col, e), []))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=e)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"select * where sel_{col} < t", fontsize=10)
        ax.set_xlabel("selectivity t (log)")
        ax.grid(which="both", alpha=0.3)
    axes[0].set_ylabel("median wall time, s (log)")
    axes[1].legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# --- simulated object store ----------------------------------------------------------------------


def _median_of(rows: list[dict], key: str) -> dict[tuple[str, str, str], float]:
    """Median of ``key`` per (dataset, query, engine) over the successful timed runs that have it."""
    vals: dict[tuple[str, str, str], list[float]] = {}
    for r in rows:
        if r.get("status") == "ok" and r.get(key) is not None:
            vals.setdefault((r["dataset"], r["query"], r["engine"]), []).append(float(r[key]))
    return {k: statistics.median(v) for k, v in vals.items()}


def _pair_table(rows: list[dict], engines: list[str], cells: list[tuple[str, str]],
                columns: tuple[tuple[str, str, str], tuple[str, str, str]]) -> str:
    """Markdown: per query, each engine's medians of two keys; `columns` gives each key, its
    heading and its format."""
    (k1, h1, f1), (k2, h2, f2) = columns
    first, second = _median_of(rows, k1), _median_of(rows, k2)
    head = "| dataset | query | " + " | ".join(f"{e} {h1} | {e} {h2}" for e in engines) + " |"
    out = [head, "|---|---|" + "---:|---:|" * len(engines)]
    for ds, q in cells:
        cols = []
        for e in engines:
            a, b = first.get((ds, q, e)), second.get((ds, q, e))
            cols += [format(a, f1) if a is not None else "–", format(b, f2) if b is not None else "–"]
        out.append(f"| {ds} | {q} | " + " | ".join(cols) + " |")
    return "\n".join(out)


def planning_table(rows: list[dict], engines: list[str], cells: list[tuple[str, str]]) -> str:
    """Markdown: per query timed with its planning apart (Delta's), each engine's median seconds to
    the executed plan and in all; empty when no query was."""
    plan = _median_of(rows, "plan_seconds")
    timed = [(ds, q) for ds, q in cells if any((ds, q, e) in plan for e in engines)]
    if not timed:
        return ""
    return _pair_table(rows, engines, timed, (("plan_seconds", "planning (s)", ".3f"), ("seconds", "total (s)", ".3f")))


def requests_table(rows: list[dict], engines: list[str], cells: list[tuple[str, str]]) -> str:
    """Markdown: per query, each engine's median requests and MB read from the simulated store."""
    return _pair_table(rows, engines, cells, (("store_requests", "requests", ".0f"), ("store_mb", "MB", ".1f")))


def chart_requests(rows: list[dict], engines: list[str], cells: list[tuple[str, str]], path: Path, title: str) -> bool:
    """Bar chart of each engine's median requests per query (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    req = _median_of(rows, "store_requests")
    if not req:
        return False
    labels = [f"{ds}/{q}" for ds, q in cells]
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.3 * len(cells) * max(1, len(engines)) / 2))
    h = 0.8 / max(1, len(engines))
    for i, e in enumerate(engines):
        ys = [j + (i - (len(engines) - 1) / 2) * h for j in range(len(cells))]
        ax.barh(ys, [req.get((ds, q, e), 0) for ds, q in cells], height=h, label=e)
    ax.set_xscale("log")
    ax.set_yticks(range(len(cells)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("median requests per query (log)")
    ax.legend(fontsize=8)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
