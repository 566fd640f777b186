#!/usr/bin/env python3
"""Builds and runs MPICH's own MPI test programs (test/mpi) against Touchstone or Open MPI.

    tools/mpich_suite.py ts|ompi|ts-cores|ts-split [FOLDER...]

MPICH is not part of this repository: MPICH_TESTS names an unpacked copy of its test/mpi folder
(default /work/mpich/test/mpi), WORK a scratch folder (default /tmp/mpich_suite) that holds a minimal
mpitestconf.h, the binaries and results/<impl>.json, TS_BUILD Touchstone's build folder (default
build/). Each testlist entry (program, ranks, arguments, environment) is one run, judged as MPICH's
own runner (runtests) judges it: it passes when it exits 0 and prints a line "No Errors" (or "No
errors"); an entry with resultTest=TestStatus or TestErrFatal passes when the run fails (exits
non-zero or is stopped), one with TestStatusNoErrors when it fails after printing "No Errors". A run
that exits 0 printing only "Test Skipped" tested nothing: it is counted as "skipped by the program".
An entry MPICH marks xfail= (a failure its own builds expect) is counted as "xfail" when it fails.
Unlike runtests, other lines of output do not fail a run: Touchstone's own warnings (a request freed
while active, say) would. Touchstone runs on torus:8x8 (torus:16x16 above 64 ranks); runs that
declare more than 8 GB of memory are skipped. A program that the folder's Makefile.am makes from
another program's source with macros of its own (`name_SOURCES`, `name_CPPFLAGS`) is built so here
too. Compare the two JSON files to get the runs that pass under Open MPI and not here (docs/mpi.md,
"Checked against MPICH's tests"). Folders: pt2pt coll comm group datatype topo attr init basic by
default.

`ts-cores` runs `ts` first, then each of its passing runs on one host core and three other ways:
on 2 host cores with every instant's programs at once, on 4 perturbed, and on threads perturbed
(docs/parallel.md), and compares each with the run on one host core: exit status, stdout, stderr
and --result's figures but the host's (results/ts-cores.json; the runs that differ are printed). Perturbed runs sleep at random
in the ranks' calls, so a run of millions of messages may outlast its time limit: such runs are
listed as slow, not as different.

`ts-split` runs `ts` first, then each of its runs that ended in time (the failed ones too) split over
Open MPI processes (`mpirun --oversubscribe -np 2 touchstone-distributed mpirun ...`, and over 4
perturbed; docs/parallel.md, "Several processes"), and compares each with the same run in one process
(`touchstone mpirun --summary`): exit status, the ranks' output, the summary (makespan, messages,
trace_hash, this one only after a run that succeeded) and the rest of the report, addresses and
Open MPI's own box saying that a process failed aside (results/ts-split.json; the runs that differ
are printed). SPLIT_RUNS=failed splits only the runs that failed in one process.

Each stage writes its results to results/<stage>.jsonl as the runs end, one JSON object a line, so
a stopped run keeps what it found; the JSON file is written when the stage ends.
"""
import concurrent.futures as cf
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import threading

T = pathlib.Path(os.environ.get("MPICH_TESTS", "/work/mpich/test/mpi"))
W = pathlib.Path(os.environ.get("WORK", "/tmp/mpich_suite"))
TS = pathlib.Path(os.environ.get("TS_BUILD", pathlib.Path(__file__).resolve().parent.parent / "build"))
# Testlist lines that configure keeps only with an optional part of MPI, provided here: the name service.
ENABLED_MARKERS = ["@namepub_tests@"]
FOLDERS = ["pt2pt", "coll", "comm", "group", "datatype", "topo", "attr", "init", "basic"]
impl = sys.argv[1]
same_on_cores = impl == "ts-cores"
same_split = impl == "ts-split"
impl = "ts" if same_on_cores or same_split else impl
folders = sys.argv[2:] or FOLDERS
# MPICH's configure writes mpitestconf.h and dtpoolsconf.h; these are the few settings the tests need.
CONF = """#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STRING_H 1
#define HAVE_STDLIB_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_STDINT_H 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INTEGER16 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_GETRUSAGE 1
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_VOID_P 8
#define SIZEOF_MPI_OFFSET 8
#define POINTERINT_t long
#define USE_STRICT_MPI 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_NONE
"""
(W / "conf").mkdir(parents=True, exist_ok=True)
(W / "conf" / "mpitestconf.h").write_text(CONF)
(W / "conf" / "mtest_mpix.h").write_text("")
# dtpools includes "../dtpoolsconf.h": found from an include folder one level below conf/.
(W / "conf" / "dtpoolsconf.h").write_text(CONF)
(W / "conf" / "inc").mkdir(exist_ok=True)
INC = ["-I", str(W / "conf" / "inc"), "-I", str(W / "conf"), "-I", str(T / "include"), "-I", str(T / "dtpools" / "include"), "-w"]
UTIL_SRC = [T / "util" / f for f in ("mtest.c", "mtest_common.c", "dtypes.c", "mtest_single.c")] + \
    sorted((T / "dtpools" / "src").glob("*.c"))
CC = ["mpicc"] if impl == "ompi" else [str(TS / "bin" / "touchstone-mpicc")]
# The helpers are compiled once; one that does not compile is compiled with each program instead,
# so that the program's build failure names what is missing.
UTIL = []
(W / "util" / impl).mkdir(parents=True, exist_ok=True)
for src in UTIL_SRC:
    obj = W / "util" / impl / (src.stem + ".o")
    extra = [] if impl == "ompi" else ["-fPIC"]
    p = subprocess.run(CC + INC + extra + ["-c", str(src), "-o", str(obj)], capture_output=True, text=True)
    UTIL.append(str(obj) if p.returncode == 0 else str(src))
print("helpers compiled separately:", [u for u in UTIL if u.endswith(".c")])


def parse(folder):
    runs = []
    tl = T / folder / "testlist.in"
    tl = tl if tl.exists() else T / folder / "testlist"
    if not tl.exists():
        return runs
    for line in tl.read_text().splitlines():
        line = line.strip()
        # configure's markers of optional parts: those of what is provided here are enabled
        for marker in ENABLED_MARKERS:
            line = line.removeprefix(marker)
        if not line or line.startswith("#") or "@" in line:
            continue
        toks = line.split()
        if len(toks) < 2 or not toks[1].isdigit():
            continue
        name, np = toks[0], int(toks[1])
        args, env, opts = [], {}, {}
        for t in toks[2:]:
            k, _, v = t.partition("=")
            if k == "arg":
                args.append(v)
            elif k == "env":
                ek, _, ev = v.partition("=")
                env[ek] = ev
            else:
                opts[k] = v
        runs.append(dict(folder=folder, name=name, np=np, args=args, env=env, opts=opts, line=line))
    return runs


def source(folder, name):
    for ext in (".c",):
        p = T / folder / (name + ext)
        if p.exists():
            return p
    return None


def makefile_programs(folder):
    """The programs the folder's Makefile.am builds from one C source with macros of their own (MPICH
    makes start_pready_wait of start_pready.c with -DTEST_WAIT): name -> (source, -D flags)."""
    mk = T / folder / "Makefile.am"
    if not mk.exists():
        return {}
    text = mk.read_text(errors="replace").replace("\\\n", " ")
    sources = dict(re.findall(r"^(\w+)_SOURCES\s*=\s*(\S+\.c)\s*$", text, re.M))
    flags = {n: [f for f in v.split() if f.startswith("-D")] for n, v in re.findall(r"^(\w+)_CPPFLAGS\s*=(.*)$", text, re.M)}
    return {n: (T / folder / src, flags.get(n, [])) for n, src in sources.items()}


def build(folder, name):
    out = W / "bin" / impl / folder / name
    out.parent.mkdir(parents=True, exist_ok=True)
    src, defines = makefile_programs(folder).get(name, (source(folder, name), []))
    if not src or not src.exists():
        return False, "no C source"
    text = src.read_text(errors="replace")
    # Newer tests define run() and get main() from util/run_mpitests.c.
    runner = [] if re.search(r"\bmain\s*\(", text) else [str(T / "util" / "run_mpitests.c")]
    cmd = CC + INC + defines + [str(src)] + runner + UTIL + ["-o", str(out), "-lm"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        missing = sorted(set(re.findall(r"undefined reference to `(\w+)'", p.stderr)) |
                         set(re.findall(r"‘(MPI\w+)’ undeclared", p.stderr)) |
                         set(re.findall(r"implicit declaration of function ‘(MPI\w+)’", p.stderr)))
        last = [l for l in p.stderr.strip().splitlines() if "error" in l][:1] or p.stderr.strip().splitlines()[-1:]
        return False, "build: " + (" ".join(missing[:12]) if missing else last[0][:200])
    return True, ""


def machine(r):
    # The spawn folder's programs start processes on the VPs -np leaves free: up to 65 at once
    # (concurrent_spawns), 128 in turn (taskmanager).
    return "torus:8x8" if r["np"] <= 64 and r["folder"] != "spawn" else "torus:16x16"


def run(r, options=(), result=None):
    exe = W / "bin" / impl / r["folder"] / r["name"]
    env = dict(os.environ, **r["env"])
    if impl == "ompi":
        cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(r["np"]), str(exe)] + r["args"]
    else:
        cmd = [str(TS / "bin" / "touchstone"), "mpirun", "--machine", machine(r), "-np", str(r["np"]), *options] + \
            (["--result", str(result)] if result else []) + [str(exe)] + r["args"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, cwd=exe.parent)
        out = p.stdout + p.stderr
        if result is not None:  # ts-cores: the whole run, to compare
            figures = json.loads(result.read_text()) if result.exists() else {}
            for host in ("host_seconds", "instants_at_once", "continued_ahead"):
                figures.pop(host, None)
            return dict(exit=p.returncode, stdout=p.stdout, stderr=p.stderr, figures=figures, cmd=shlex.join(cmd))
        return verdict(r, p.returncode, out), f"rc={p.returncode}", out[-1500:]
    except subprocess.TimeoutExpired as e:
        # runtests' own time limit ends such a run with a failing status
        return (None if result is not None else (verdict(r, -9, ""), "timeout", ""))


def verdict(r, rc, out):
    """A finished run's status, by MPICH's runtests (TestNormal, TestStatus, TestErrFatal,
    TestStatusNoErrors) and its xfail= entries."""
    no_errors = re.search(r"^\s*No [Ee]rrors\s*$", out, re.M) is not None
    test = r["opts"].get("resultTest", "TestNormal")
    if test in ("TestStatus", "TestErrFatal"):
        ok = rc != 0
    elif test == "TestStatusNoErrors":
        ok = rc != 0 and no_errors
    else:
        ok = rc == 0 and no_errors
        if rc == 0 and not no_errors and re.search(r"^\s*Test Skipped\s*$", out, re.M):
            return "skipped by the program"
    if ok:
        return "pass"
    return "xfail" if "xfail" in r["opts"] else "fail"


CORES = {"2 cores": ["--host-cores", "2", "--parallel-programs-from-us", "0"],
         "4 cores, perturbed": ["--host-cores", "4", "--parallel-programs-from-us", "0", "--perturb", "7"],
         "threads, perturbed": ["--execution", "threads", "--perturb", "3"]}


def compare(r, first, others, parts):
    """The run made the first way against the same run made each of the others' (name -> a function
    making the run, or returning None when it outlasted its time limit): which parts differ, or that
    one was slow."""
    name, make = first
    one = make()
    if one is None:
        return dict(r, status="slow", why=f"{name}: time limit")
    for name, make in others.items():
        other = make()
        if other is None:
            return dict(r, status="slow", why=f"{name}: time limit")
        what = [part for part in parts if one[part] != other[part]]
        if what:
            return dict(r, status="differs", why=f"{name}: {', '.join(what)}", one=one, other=other)
    return dict(r, status="same")


def compare_on_cores(k, r):
    """The run on one host core against the others of CORES."""
    d = W / "cores" / f"{k:04d}"
    d.mkdir(parents=True, exist_ok=True)
    others = {name: (lambda o=options, f=name.replace(" ", "").replace(",", ""): run(r, o, d / (f + ".json")))
              for name, options in CORES.items()}
    return compare(r, ("one host core", lambda: run(r, ["--host-cores", "1"], d / "one.json")), others,
                   ("exit", "stdout", "stderr", "figures"))


# Open MPI processes and touchstone-distributed's options
SPLITS = {"2 processes": (2, []), "4 processes, perturbed": (4, ["--perturb", "3"])}


def split_run(r, processes=1, options=()):
    """A run in one process or split over Open MPI processes: exit status, the ranks' output, the
    summary without what the host decides, the rest of the report; None when it outlasts its time
    limit."""
    exe = W / "bin" / impl / r["folder"] / r["name"]
    ts = [str(TS / "bin" / "touchstone"), "mpirun"]
    if processes > 1:
        ts = ["mpirun", "--oversubscribe", "-np", str(processes), str(TS / "bin" / "touchstone-distributed"), "mpirun"]
    cmd = ts + [*options] + ["--machine", machine(r), "-np", str(r["np"]), "--summary", str(exe)] + r["args"]
    env = dict(os.environ, **r["env"], OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=exe.parent)
    except subprocess.TimeoutExpired:
        return None
    # A report may name an address (a dynamic window's memory): where each run's process put it.
    # Open MPI's mpirun says in a box of dashes that a process failed: not the run's report.
    err = re.sub(r"^-{20,}\n.*?^-{20,}\n", "", p.stderr, flags=re.M | re.S)
    err = re.sub(r"0x[0-9a-f]{8,}", "0x(address)", err).splitlines()
    summary = [re.sub(r", run [0-9.]+ host s|, program loaded .*", "", l) for l in err if l.startswith("touchstone mpirun: ")]
    if p.returncode != 0:  # after a failure, the hash of each process's share of the run
        summary = [re.sub(r", trace_hash [0-9a-f]+", "", l) for l in summary]
    report = [l for l in err if not l.startswith("touchstone mpirun: ") and "trace_hash" not in l]
    return dict(exit=p.returncode, stdout=p.stdout, summary=summary, report=report, cmd=shlex.join(cmd))


def compare_split(r):
    """The run in one process against the split runs of SPLITS."""
    others = {name: (lambda n=n, o=o: split_run(r, n, o)) for name, (n, o) in SPLITS.items()}
    return compare(r, ("one process", lambda: split_run(r)), others, ("exit", "stdout", "summary", "report"))


runs = [r for f in folders for r in parse(f)]
built = {}
for r in runs:
    key = (r["folder"], r["name"])
    if key not in built:
        built[key] = None
with cf.ThreadPoolExecutor(2) as ex:
    futs = {k: ex.submit(build, *k) for k in built}
    for k, f in futs.items():
        built[k] = f.result()


def one(r):
    if float(r["opts"].get("mem", "0")) >= 8:
        return dict(r, status="skipped", why="needs more than 8 GB")
    ok_b, why = built[(r["folder"], r["name"])]
    if not ok_b:
        return dict(r, status="nobuild", why=why)
    status, why, out = run(r)
    return dict(r, status=status, why=why, out=out)


def stage(name, fn, items):
    """fn over items on JOBS threads, in their order; each result is appended to
    results/<name>.jsonl as it comes, and all of them go to results/<name>.json at the end."""
    (W / "results").mkdir(exist_ok=True)
    lock = threading.Lock()
    with open(W / "results" / f"{name}.jsonl", "w", buffering=1) as log:
        def logged(item):
            result = fn(item)
            with lock:
                log.write(json.dumps(result) + "\n")
            return result
        with cf.ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as ex:
            results = list(ex.map(logged, items))
    (W / "results" / f"{name}.json").write_text(json.dumps(results, indent=1))
    return results


results = stage(impl, one, runs)
if same_on_cores:
    passing = [(k, r) for k, r in enumerate(results) if r["status"] == "pass"]
    results = stage("ts-cores", lambda kr: compare_on_cores(*kr), passing)
if same_split:
    # Every run that ended in time, failures included: a split run fails as one process does.
    passing = [r for r in results if r["status"] not in ("nobuild", "skipped") and r["why"] != "timeout"]
    if os.environ.get("SPLIT_RUNS") == "failed":
        passing = [r for r in passing if r["status"] != "pass"]
    results = stage("ts-split", compare_split, passing)
if same_on_cores or same_split:
    for x in results:
        if x["status"] != "same":
            print(f"{x['status']}: {x['folder']}/{x['name']} -np {x['np']} {' '.join(x['args'])}: {x['why']}")
from collections import Counter
for f in folders:
    c = Counter(x["status"] for x in results if x["folder"] == f)
    print(f, dict(c))
