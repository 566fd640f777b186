#!/usr/bin/python3
"""Draws the makespan of each algorithm against the message size, log-log, from the CSV that
`touchstone sweep --format csv` writes (one line per algorithm; at each size the fastest
algorithm's point is ringed and named). Used by `touchstone sweep --plot FILE` and
`touchstone plot`; the format follows FILE's extension (.png, .svg or .pdf).

    /usr/bin/python3 tools/plot_sweep.py SWEEP.csv FIGURE.png [TITLE]

Needs python3-matplotlib (Debian).
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text: searchable, and checked by the tests
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit("usage: plot_sweep.py SWEEP.csv FIGURE.(png|svg|pdf) [TITLE]")
    series = defaultdict(dict)  # algorithm -> size -> makespan (us)
    machine = None
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            machine = machine or row["machine"]
            series[row["algorithm"]][int(row["size"])] = float(row["makespan_us"])
    if not series:
        sys.exit(f"plot_sweep.py: no runs in {argv[1]}")
    best = {}
    for name, points in series.items():
        for size, t in points.items():
            if size not in best or t < best[size][1]:
                best[size] = (name, t)
    fig, ax = plt.subplots(figsize=(9, 6))
    for name in series:  # the sweep's column order
        xs = sorted(series[name])
        ax.plot(xs, [series[name][x] / 1e3 for x in xs], marker="o", markersize=3, label=name)
    for size, (name, t) in sorted(best.items()):
        ax.plot([size], [t / 1e3], marker="o", markersize=11, markerfacecolor="none", markeredgecolor="black")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size L (bytes)")
    ax.set_ylabel("virtual makespan (ms)")
    ax.set_title(argv[3] if len(argv) == 4 else f"{machine}: makespan per algorithm (ringed: fastest at that size)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    winners = ", ".join(f"{s}: {n}" for s, (n, _) in sorted(best.items()))
    fig.text(0.01, 0.01, "fastest: " + winners, fontsize=6, wrap=True)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(argv[2])


if __name__ == "__main__":
    main(sys.argv)
