#!/usr/bin/python3
"""Draws the makespan of each algorithm against the message size, log-log, from the CSV that
`touchstone sweep --format csv` writes (one line per algorithm; at each size the fastest
algorithm's point is ringed and named). Used by `touchstone sweep --plot FILE` and
`touchstone plot`; the format follows FILE's extension (.png, .svg or .pdf). Only the runs of the
CSV's first machine are drawn (a `sweep --vary` CSV holds its variants' runs after the preset's).

    /usr/bin/python3 experiment/scripts/plot_sweep.py [--doubtful-below LEAD] [--source NAME] SWEEP.csv FIGURE.png [TITLE]

--source names the CSV in error messages (`touchstone plot` passes the user's file; the sweep's
own CSV goes through a temporary file). A CSV that is not a sweep's (a column missing, a size or
a makespan that is not a number) ends with one line saying which file, row and column, and exit
status 2; a missing matplotlib with status 3, so that the caller can tell the two apart.

With --doubtful-below (0.10 for the delta preset: touchstone::ranking_evidence), a winner whose
lead over the next fastest is under LEAD is ringed with a dashed line and its name marked '?',
as the sweep's table marks it: the preset's evidence cannot tell such a winner from the next.

Needs python3-matplotlib (Debian).
"""
import csv
import math
import sys
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text: searchable, and checked by the tests
    import matplotlib.pyplot as plt
except ImportError as e:
    print(f"plot_sweep.py: needs python3-matplotlib (Debian: apt-get install python3-matplotlib): {e}", file=sys.stderr)
    sys.exit(3)

REQUIRED = ("machine", "algorithm", "size", "makespan_us")


def bad_input(message):
    print(f"plot_sweep.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_sweep(path, name):
    """The runs of the CSV's first machine as algorithm -> size -> makespan (us), and the other machines."""
    series = defaultdict(dict)
    machine = None
    other_machines = set()  # a sweep --vary CSV: the variants' runs follow the preset's
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
            if missing:
                bad_input(f"{name} is not a sweep's CSV (touchstone sweep --format csv): no column"
                          + ("s " if len(missing) > 1 else " ") + ", ".join(f"'{c}'" for c in missing))
            for line, row in enumerate(reader, start=2):
                if any(row[c] is None for c in REQUIRED):
                    bad_input(f"{name}, line {line}: fewer fields than the header has")
                try:
                    size, makespan = int(row["size"]), float(row["makespan_us"])
                except ValueError:
                    bad_input(f"{name}, line {line}: size '{row['size']}' or makespan_us '{row['makespan_us']}' "
                              "is not a number")
                if size <= 0 or not math.isfinite(makespan) or makespan < 0:
                    bad_input(f"{name}, line {line}: size {row['size']} or makespan_us {row['makespan_us']} is out of "
                              "range (a size above 0, a finite makespan of at least 0)")
                machine = machine or row["machine"]
                if row["machine"] != machine:
                    other_machines.add(row["machine"])
                    continue
                series[row["algorithm"]][size] = makespan
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        bad_input(f"cannot read {name}: {e}")
    if not series:
        bad_input(f"no runs in {name}")
    return series, machine, other_machines


def main(argv):
    doubtful_below = 0.0
    source = None
    while len(argv) > 2 and argv[1] in ("--doubtful-below", "--source"):
        if argv[1] == "--doubtful-below":
            doubtful_below = float(argv[2])
        else:
            source = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) not in (3, 4):
        sys.exit("usage: plot_sweep.py [--doubtful-below LEAD] [--source NAME] SWEEP.csv FIGURE.(png|svg|pdf) [TITLE]")
    series, machine, other_machines = read_sweep(argv[1], source or argv[1])
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
    try:
        fig.savefig(argv[2])
    except OSError as e:
        bad_input(f"cannot write {argv[2]}: {e}")


if __name__ == "__main__":
    main(sys.argv)
