"""Draws benchmarks/selection/chart.png from results.csv (written by `make bench-selection`).

One panel per page x selectivity: median ns per page row against the selection's mean run
length, selectors vs mask. Lines are the evenly spaced shapes; markers are the exponential-gap
and random-noise shapes. The dashed line is the chosen threshold (read from results.md).
"""
import csv
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(directory: str = "benchmarks/selection") -> None:
    d = Path(directory)
    rows = list(csv.DictReader((d / "results.csv").open()))
    m = re.search(r"Chosen default threshold: \*\*(\d+)\*\*", (d / "results.md").read_text())
    threshold = int(m.group(1)) if m else None
    pages = sorted({r["page"] for r in rows}, reverse=True)
    sels = sorted({float(r["selectivity"]) for r in rows})
    fig, axes = plt.subplots(len(pages), len(sels), figsize=(5 * len(sels), 4 * len(pages)), squeeze=False)
    colors = {"selectors": "tab:blue", "mask": "tab:orange"}
    for i, page in enumerate(pages):
        for j, sel in enumerate(sels):
            ax = axes[i][j]
            for strategy, color in colors.items():
                pts = [r for r in rows if r["page"] == page and float(r["selectivity"]) == sel and r["strategy"] == strategy]
                even = sorted((float(r["mean_run"]), float(r["ns_per_row"])) for r in pts if r["family"] == "even")
                ax.plot([x for x, _ in even], [y for _, y in even], "-o", color=color, ms=3, label=f"{strategy} (even runs)")
                for fam, marker in (("exp", "^"), ("noise", "s")):
                    o = [(float(r["mean_run"]), float(r["ns_per_row"])) for r in pts if r["family"] == fam]
                    ax.scatter([x for x, _ in o], [y for _, y in o], marker=marker, color=color, s=28,
                               label=f"{strategy} ({fam})", edgecolors="black", linewidths=0.4)
            if threshold:
                ax.axvline(threshold, ls="--", color="gray", lw=1, label=f"threshold {threshold}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{page}, {sel * 100:.0f} % selected")
            ax.set_xlabel("mean run length (rows / runs)")
            ax.set_ylabel("ns per page row (median)")
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Row selections: run-length selectors vs mask (lower is better)")
    fig.tight_layout()
    fig.savefig(d / "chart.png", dpi=110)
    print(f"wrote {d / 'chart.png'}")


if __name__ == "__main__":
    main(*sys.argv[1:])
