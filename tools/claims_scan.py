#!/usr/bin/env python3
"""Scores a preset's parameters against every claim of a paper: what the evidence leaves open.

Runs a paper program's claims table (`build/bin/paperNNN claims ... --format csv`) once for the
preset and once per variant (machine options appended to the preset), and prints per variant the
verdict counts, the mean squared log ratio ours/paper over the numeric claims, and the claims whose
verdict changed; then, per parameter (the variant name before '@'), the scanned values whose
reproduced count is within --count-slack of the best of that scan, the preset's value included.

    tools/claims_scan.py --preset-value send_us@0 --preset-value recv_us@0 \\
        --command 'build/bin/paper003 claims --preset-only --machine cm5:32{options}' \\
        send_us@0.8=,send_us=0.8,send_us_per_packet=0.8  recv_us@1.7=,recv_us=1.7,recv_us_per_packet=0

`{options}` in the command is replaced by the variant's options ('' for the preset). A scan
scores each point alone: give paper003 `--preset-only`, or its claims that flip on the preset's
own open variants come back undecided (counted here with "off"). A value is a
number (the parameter's value at that point) so that the scan can be ordered. docs/machines.md
("Where every preset parameter comes from, and what the papers leave open") has the scans run for
the cm5 and switch presets; `paper000 calibrate` is the delta's (in-process, with its Figure 9
loss).
"""
import argparse
import csv
import io
import math
import shlex
import subprocess
import sys


def run_claims(command, options):
    cmd = shlex.split(command.replace("{options}", options)) + ["--format", "csv"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"claims_scan: cannot run {' '.join(cmd)}: {e}")
    if done.returncode != 0:
        sys.exit(f"claims_scan: {' '.join(cmd)} failed (exit {done.returncode}): {done.stderr.strip()}")
    out = done.stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    if not rows or "verdict" not in rows[0]:
        sys.exit(f"claims_scan: no claims table from {' '.join(cmd)}")
    return rows


def score(rows):
    counts = {"reproduced": 0, "off": 0, "ordering": 0}
    logs = []
    for r in rows:
        v = r["verdict"]
        counts["reproduced" if v == "reproduced" else "ordering" if v == "ordering differs" else "off"] += 1
        try:
            f = float(r["factor"])
        except ValueError:
            continue
        if f > 0 and math.isfinite(f):
            logs.append(math.log(f) ** 2)
    return counts, (sum(logs) / len(logs) if logs else float("nan"))


def changes(base, now):
    was = {r["id"]: r["verdict"] == "reproduced" for r in base}
    out = []
    for r in now:
        is_ok = r["verdict"] == "reproduced"
        if r["id"] in was and was[r["id"]] != is_ok:
            out.append(("+" if is_ok else "-") + r["id"])
    return " ".join(out) or "none"


def number(text, what):
    try:
        return float(text)
    except ValueError:
        sys.exit(f"claims_scan: {what}: expected a number, got '{text}'")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--command", required=True, help="the claims command, with {options} where the machine options go")
    ap.add_argument("--preset-value", action="append", default=[], metavar="PARAM@VALUE",
                    help="the preset's value of a scanned parameter")
    ap.add_argument("--count-slack", type=int, default=0, help="reproduced claims below the best still left open")
    ap.add_argument("variants", nargs="+", metavar="PARAM@VALUE=OPTIONS")
    a = ap.parse_args()
    preset_values = {}
    for pv in a.preset_value:
        p, _, v = pv.partition("@")
        preset_values[p] = number(v, f"--preset-value {pv}")
    variants = []
    for v in a.variants:
        head, sep, options = v.partition("=")
        param, at, value = head.partition("@")
        if not sep or not at:
            sys.exit(f"claims_scan: variant '{v}' is not PARAM@VALUE=OPTIONS")
        variants.append((param, number(value, f"variant '{v}'"), options))
    base = run_claims(a.command, "")
    (c0, loss0) = score(base)
    print(f"preset: {c0['reproduced']}/{c0['off']}/{c0['ordering']} (reproduced/off/ordering differs) "
          f"of {len(base)}, numbers loss {loss0:.4f}", flush=True)
    scans = {}
    for param, value, options in variants:
        rows = run_claims(a.command, options)
        c, loss = score(rows)
        print(f"{param:<24} {value:>9.4g} ({options}): {c['reproduced']}/{c['off']}/{c['ordering']}, "
              f"numbers loss {loss:.4f}, changes: {changes(base, rows)}", flush=True)
        if param not in scans:
            scans[param] = [(preset_values[param], c0["reproduced"])] if param in preset_values else []
        scans[param].append((value, c["reproduced"]))
    print("\nLeft open (values scanned, the preset's included):")
    for param, scan in scans.items():
        scan.sort()
        best = max(n for _, n in scan)
        keep = [f"{x:.4g}" for x, n in scan if n >= best - a.count_slack]
        print(f"{param:<24} scanned {scan[0][0]:.4g}..{scan[-1][0]:.4g}; >= {best - a.count_slack} reproduced at: {' '.join(keep)}")


if __name__ == "__main__":
    main()
