#!/usr/bin/python3
"""Plots like paper 001's Figures 5-8 from the CSV of `paper001 search --csv`, and Figures 9 and 10
from those of `paper001 scatter42 --csv` and `paper001 both42 --csv` (docs/paper001.md).

    /usr/bin/python3 experiment/scripts/plot_paper001.py docs/paper001/fig4x4.csv docs/paper001/search.csv docs/paper001 \
        [docs/paper001/fig9.csv docs/paper001/fig10.csv]

Needs python3-matplotlib (Debian). The build and the tests do not use this script.
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            r["p2"], r["q2"], r["size"] = int(r["p2"]), int(r["q2"]), int(r["size"])
            r["model_us"] = float(r["model_us"]) if r["model_us"] else None  # empty: the paper has no equation
            r["emulated_us"] = float(r["emulated_us"]) if r["emulated_us"] else None
            rows.append(r)
    return rows


def per_submesh(rows, level, q, op, out, title, emulated=True):
    curves = defaultdict(list)
    for r in rows:
        if r["level2"] == level and r["Q"] == q and r["op"] == op:
            curves[(r["p2"], r["q2"])].append(r)
    fig, axes = plt.subplots(1, 2 if emulated else 1, figsize=(12 if emulated else 6.5, 4.8), squeeze=False)
    for col, (key, label) in enumerate([("model_us", "model (paper's equation)"), ("emulated_us", "emulated")][: 2 if emulated else 1]):
        ax = axes[0][col]
        for (p, qq), pts in sorted(curves.items()):
            pts.sort(key=lambda r: r["size"])
            ax.plot([r["size"] for r in pts], [r[key] for r in pts], marker=".", label=f"{p}x{qq}")
        ax.set_xlabel("message size S (bytes)")
        ax.set_ylabel("time (us)")
        ax.set_title(f"{title}: {label}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2, title="p2 x q2")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def best(rows, level, q, op, key):
    by_size = defaultdict(lambda: float("inf"))
    for r in rows:
        if r["level2"] == level and r["Q"] == q and r["op"] == op and r[key] is not None:
            by_size[r["size"]] = min(by_size[r["size"]], r[key])
    return by_size


def processors(level):
    """Number of processors of "R2xC2" or of the levels "R1xC1/R2xC2" (for ordering the curves)."""
    return sum(int(a) * int(b) for a, b in (part.split("x") for part in level.split("/")))


def gain_plot(rows, q, hybrid_op, multicast_op, out, title):
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    for level in sorted({r["level2"] for r in rows}, key=processors):
        name = level if "/" in level else f"1x1 / {level}"
        h, m = best(rows, level, q, hybrid_op, "model_us"), best(rows, level, q, multicast_op, "model_us")
        sizes = sorted(set(h) & set(m))
        line = None
        if sizes:
            (line,) = ax.plot(sizes, [100 * (h[s] - m[s]) / h[s] for s in sizes], marker="o", label=f"{name} model")
        he, me = best(rows, level, q, hybrid_op, "emulated_us"), best(rows, level, q, multicast_op, "emulated_us")
        esizes = sorted(set(he) & set(me))
        if esizes:
            ax.plot(esizes, [100 * (he[s] - me[s]) / he[s] for s in esizes], marker="x", linestyle="--",
                    color=line.get_color() if line else None, label=f"{name} emulated")
    ax.set_xlabel("message size S (bytes)")
    ax.set_ylabel("100 (optimal hybrid - optimal multicast) / optimal hybrid")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def best_bcast_plot(rows, out):
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    for level in sorted({r["level2"] for r in rows}, key=lambda s: int(s.split("x")[0])):
        for q in sorted({r["Q"] for r in rows}, key=int):
            mo = best(rows, level, q, "bcast-hybrid", "model_us")
            em = best(rows, level, q, "bcast-hybrid", "emulated_us")
            sizes = sorted(mo)
            if len(sizes) < 2:
                continue
            (line,) = ax.plot(sizes, [mo[s] for s in sizes], marker="o", label=f"{level} Q={q} model")
            ax.plot(sizes, [em[s] for s in sizes], marker="x", linestyle="--", color=line.get_color(), label=f"{level} Q={q} emulated")
    ax.set_xlabel("message size S (bytes)")
    ax.set_ylabel("optimal hybrid broadcast (us)")
    ax.set_yscale("log")
    ax.set_title("Best hybrid broadcast: eq. 5 vs emulation")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) not in (4, 6):
        sys.exit(__doc__)
    small, search, outdir = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    per_submesh(small, "4x4", "2", "bcast-hybrid", f"{outdir}/fig5_hybrid_bcast_4x4_q2.png", "Fig. 5: hybrid broadcast, 4x4, Q=2")
    per_submesh(small, "4x4", "2", "scatter-hybrid", f"{outdir}/fig6_hybrid_scatter_4x4_q2.png", "Fig. 6: hybrid scatter, 4x4, Q=2")
    per_submesh(small, "4x4", "2", "scatter-multicast", f"{outdir}/fig7_multicast_scatter_4x4_q2.png",
                "Fig. 7: multicast scatter, 4x4, Q=2")
    gain_plot(search, "8", "scatter-hybrid", "scatter-multicast", f"{outdir}/fig8_scatter_gain_q8.png",
              "Fig. 8: optimal hybrid vs multicast scatter, Q=8")
    gain_plot(search, "8", "bcast-hybrid", "bcast-multicast", f"{outdir}/bcast_gain_q8.png",
              "Multicast broadcast gain, Q=8 (eqs. 5, 6 and emulated)")
    best_bcast_plot(search, f"{outdir}/bcast_best_model_vs_emulated.png")
    if len(sys.argv) == 6:
        fig9, fig10 = load(sys.argv[4]), load(sys.argv[5])
        gain_plot(fig9, "8", "scatter42-hybrid", "scatter42-multicast", f"{outdir}/fig9_scatter42_gain_q8.png",
                  "Fig. 9: level 2 only, hybrid vs multicast, Q=8 (eqs. 12-14 solid)")
        gain_plot(fig10, "8", "both-hybrid", "both-multicast", f"{outdir}/fig10_both_levels_gain_q8.png",
                  "Fig. 10: both levels, Q=8 (model: ours; the paper has none)")


if __name__ == "__main__":
    main()
