#!/usr/bin/python3
"""Draws the makespan of each algorithm against the message size, log-log, from the CSV that
`touchstone sweep --format csv` writes (one line per algorithm; at each size the fastest
algorithm's point is ringed and named). Used by `touchstone sweep --plot FILE` and
`touchstone plot`; the format follows FILE's extension (.png, .svg or .pdf). Only the runs of the
CSV's first machine are drawn (a `sweep --vary` CSV holds its variants' runs after the preset's).

    /usr/bin/python3 tools/plot_sweep.py [--doubtful-below LEAD] SWEEP.csv FIGURE.png [TITLE]

With --doubtful-below (0.10 for the delta preset: touchstone::ranking_evidence), a winner whose
lead over the next fastest is under LEAD is ringed with a dashed line and its name marked '?',
as the sweep's table marks it: the preset's evidence cannot tell such a winner from the next.

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
    doubtful_below = 0.0
    if len(argv) > 2 and argv[1] == "--doubtful-below":
        doubtful_below = float(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) not in (3, 4):
        sys.exit("usage: plot_sweep.py [--doubtful-below LEAD] SWEEP.csv FIGURE.(png|svg|pdf) [TITLE]")
    series = defaultdict(dict)  # algorithm -> size -> makespan (us)
    machine = None
    other_machines = set()  # a sweep --vary CSV: the variants' runs follow the preset's
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            machine = machine or row["machine"]
            if row["machine"] != machine:
                other_machines.add(row["machine"])
                continue
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

    def second_fastest(size):
        times = sorted(points[size] for points in series.values() if size in points)
        return times[1] if len(times) > 1 else None

    def doubtful(size, t):  # a real lead over the next fastest, but under doubtful_below
        nxt = second_fastest(size)
        return nxt is not None and t < nxt < t * (1 + doubtful_below)

    for size, (name, t) in sorted(best.items()):
        ax.plot([size], [t / 1e3], marker="o", markersize=11, markerfacecolor="none", markeredgecolor="black")
        if doubtful(size, t):  # a second, grey ring: the '?' of the sweep's table
            ax.plot([size], [t / 1e3], marker="o", markersize=16, markerfacecolor="none", markeredgecolor="gray")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    # An alltoallv/ run's size is its traffic per processor t (docs/algorithms.md).
    traffic = all(name.startswith("alltoallv/") for name in series)
    ax.set_xlabel("traffic per processor t (bytes)" if traffic else "message size L (bytes)")
    ax.set_ylabel("virtual makespan (ms)")
    if len(argv) == 4:
        ax.set_title(argv[3])
    elif any(doubtful(size, t) for size, (_, t) in best.items()):
        ax.set_title(f"{machine}: makespan per algorithm (ringed: fastest at that size;\n"
                     f"ringed twice, '?': a lead under {100 * doubtful_below:.0f}%, not decisive on this preset)",
                     fontsize=10)
    else:
        ax.set_title(f"{machine}: makespan per algorithm (ringed: fastest at that size)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    winners = ", ".join(f"{s}: {n} ({100 * (second_fastest(s) / t - 1):.1f}%?)" if doubtful(s, t) else f"{s}: {n}"
                        for s, (n, t) in sorted(best.items()))
    if other_machines:
        winners += f"; not drawn: the runs of {len(other_machines)} other machine(s) in the CSV (sweep --vary variants)"
    fig.text(0.01, 0.01, "fastest: " + winners, fontsize=6, wrap=True)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(argv[2])


if __name__ == "__main__":
    main(sys.argv)
