#!/usr/bin/env python3
"""Runs the MPI Bugs Initiative's codes (MBI) under touchstone mpirun and scores what it finds.

    tools/mbi_suite.py [CODE_PREFIX...]

MBI is not part of this repository. Its generators (SimGrid ships them in teshsuite/smpi/MBI) write
about 1,900 small C programs, each with a header stating how to run it and what a correct tool says:
"OK", or "ERROR: <class>" (CallMatching, ParamMatching, GlobalConcurrency, ...). MBI_CODES names the
folder of generated codes (default /work/mbi/gen), WORK a scratch folder (default /tmp/mbi_suite),
TS_BUILD Touchstone's build folder (default build/). CODE_PREFIX limits the run to codes whose file
name starts with one of them ("CallOrdering_", "ResLeak").

Each code runs twice on mesh:4x4: as a user runs it (`touchstone mpirun`) and with the strict check
(`--check --races=error`, docs/debugging.md). A run that exits 0 says "correct"; any other ending
says "error" and is sorted by what the report names (deadlock, collective mismatch, invalid argument,
leak, race, ...). Scores per class, like MBI's own: an erroneous code found is a true positive, one
that passes a false negative; a correct code blamed is a false positive; a crash, a hang past the
host limit or a build failure is a tool error. results/mbi.json keeps every run with its output tail.
"""
import collections
import concurrent.futures as cf
import json
import os
import pathlib
import re
import subprocess
import sys

CODES = pathlib.Path(os.environ.get("MBI_CODES", "/work/mbi/gen"))
W = pathlib.Path(os.environ.get("WORK", "/tmp/mbi_suite"))
TS = pathlib.Path(os.environ.get("TS_BUILD", pathlib.Path(__file__).resolve().parent.parent / "build"))
MODES = {"default": [], "check": ["--check", "--races=error"]}
HOST_LIMIT = 120  # host seconds; --wall-limit ends a rank that spins well before


def expectations(path):
    """The (np, expect, detail) of each test the header of an MBI code declares."""
    tests, lines = [], path.read_text(errors="replace").splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s+\$ ?mpirun -np (\d+) \$\{EXE\}(.*)", line)
        if m and i + 1 < len(lines):
            verdict = lines[i + 1].strip(" |")
            detail = verdict.split(":", 1)[1].strip() if verdict.startswith("ERROR") else "OK"
            tests.append((int(m.group(1)), "OK" if detail == "OK" else "ERROR", detail, m.group(2).split()))
    return tests


# What a failed run's report names, from its first line ("rank 1 failed at t=..: MPI_Bcast on rank 1:
# the roots differ ...", "application deadlock at ...") or a lifecycle warning; most specific first.
DIAGNOSES = [
    ("collective mismatch", r"collectives do not match|the (roots|operators|type signatures|counts) differ"),
    ("type mismatch", r"type signature"),
    ("buffer ownership", r"was written while|written to before|owns its buffer|belongs to that operation"),
    ("leak", r"was never freed"),
    ("request lifecycle", r"never completed|still active|freed while active|is not persistent|is active"),
    ("rma conflict", r"conflicting accesses"),
    ("rma epoch", r"RMA call outside its synchronization"),
    ("harmful race", r"\b[1-9]\d* harmful race"),
    ("deadlock", r"application deadlock"),
    ("invalid argument", r"\(invalid [a-z ]+\)|is not valid|out of range"),
    ("abort", r"MPI_Abort"),
]


def diagnose(rc, out):
    if rc == 0:
        return "correct"
    if rc < 0 or rc >= 128:
        return "crash"
    failure = re.search(r"(?:the run failed:|the original run failed:)\s*(.*)", out)
    for text in ([failure.group(1)] if failure else []) + [out]:
        for name, pattern in DIAGNOSES:
            if re.search(pattern, text):
                return name
    return "error (other)"


def build(path):
    exe = W / "bin" / path.stem
    exe.parent.mkdir(parents=True, exist_ok=True)
    if exe.exists() and exe.stat().st_mtime > path.stat().st_mtime:
        return True, ""
    p = subprocess.run([str(TS / "bin" / "touchstone-mpicc"), "-g", "-w", str(path), "-o", str(exe)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        missing = sorted(set(re.findall(r"undefined reference to `(\w+)'", p.stderr)) |
                         set(re.findall(r"‘(MPI\w+)’ undeclared", p.stderr)) |
                         set(re.findall(r"implicit declaration of function ‘(MPI\w+)’", p.stderr)))
        return False, " ".join(missing) or p.stderr.strip().splitlines()[-1][:200]
    return True, ""


def run(path, np, args, mode):
    cmd = [str(TS / "bin" / "touchstone"), "mpirun", "--machine", "mesh:4x4", "-np", str(np),
           "--wall-limit", "30"] + MODES[mode] + [str(W / "bin" / path.stem)] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=HOST_LIMIT, cwd=W)
        out = p.stdout + p.stderr
        return diagnose(p.returncode, out), p.returncode, out[-2500:]
    except subprocess.TimeoutExpired:
        return "hang", None, ""


def one(path):
    ok, why = build(path)
    rows = []
    for n, (np, expect, detail, args) in enumerate(expectations(path)):
        row = dict(code=path.name, test=n, np=np, expect=expect, detail=detail)
        if not ok:
            rows.append(dict(row, build=why))
            continue
        for mode in MODES:
            found, rc, out = run(path, np, args, mode)
            row[mode] = dict(found=found, rc=rc, out=out)
        rows.append(row)
    return rows


def score(rows, mode):
    """Per expected class: true/false positives and negatives, and tool errors, in `mode`."""
    table = collections.defaultdict(collections.Counter)
    for r in rows:
        cls = r["detail"]
        if "build" in r:
            table[cls]["nobuild"] += 1
            continue
        found = r[mode]["found"]
        if found in ("crash", "hang"):
            table[cls]["tool error"] += 1
        elif r["expect"] == "OK":
            table[cls]["TN" if found == "correct" else "FP"] += 1
        else:
            table[cls]["FN" if found == "correct" else "TP"] += 1
    return table


def main():
    prefixes = sys.argv[1:]
    codes = sorted(p for p in CODES.glob("*.c") if not prefixes or p.name.startswith(tuple(prefixes)))
    rows = []
    with cf.ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as ex:
        for r in ex.map(one, codes):
            rows.extend(r)
    (W / "results").mkdir(parents=True, exist_ok=True)
    (W / "results" / "mbi.json").write_text(json.dumps(rows, indent=1))
    cols = ["TP", "FN", "TN", "FP", "tool error", "nobuild"]
    for mode in MODES:
        print(f"\n{mode} ({' '.join(['touchstone mpirun'] + MODES[mode])}):")
        print(f"{'class':<22}" + "".join(f"{c:>11}" for c in cols))
        table, total = score(rows, mode), collections.Counter()
        for cls in sorted(table):
            total.update(table[cls])
            print(f"{cls:<22}" + "".join(f"{table[cls][c]:>11}" for c in cols))
        print(f"{'all':<22}" + "".join(f"{total[c]:>11}" for c in cols))


if __name__ == "__main__":
    main()
