#!/usr/bin/env python3
"""The whole catalog split over Open MPI processes (touchstone-distributed, docs/parallel.md,
"Several processes") against `touchstone run --phantom`, on one machine at the sizes given: over 2
processes with real payloads (each algorithm checks the data it received), and over 4 with phantom
payloads and --perturb, every (algorithm, size) the machine suits is the single process's run
(trace_hash, makespan, events, messages, packets, blocked time), and every process exits 0. The
alltoallv/ algorithms run with section 7's generated traffic (k = 4, l = 1/2, t the size).

  catalog.py TOUCHSTONE TOUCHSTONE_DISTRIBUTED MPIRUN MACHINE SIZE...
"""
import json
import os
import subprocess
import sys

FIGURES = ("blocked_us", "events", "makespan_us", "messages", "packets", "trace_hash", "vps")
# The communication matrix of the alltoallv/ algorithms (paper 003): section 7's generator, the size
# being the traffic per processor.
TRAFFIC = "k=4,l=1/2"


def traffic(names):
    return ["--traffic", TRAFFIC] if names[0].startswith("alltoallv/") else []


def main():
    ts, dist, mpirun, machine, *sizes = sys.argv[1:]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    names = [line.split()[0] for line in subprocess.run([ts, "list", "algorithms"], capture_output=True, text=True,
                                                         check=True).stdout.splitlines()
             if line and not line.startswith(" ") and "/" in line.split()[0]]
    names = [n for n in names if n != "selftest/deadlock"]
    single = {}
    for name in names:
        for size in sizes:
            r = subprocess.run([ts, "run", "--machine", machine, "--algorithm", name, "--size", size, "--phantom",
                                "--format", "json"] + traffic([name]), capture_output=True, text=True)
            single[(name, int(size))] = json.loads(r.stdout) if r.returncode == 0 else None
    ran = {k: v for k, v in single.items() if v is not None}
    if not ran:
        sys.exit(f"touchstone run ran nothing of the catalog on {machine}")
    failed = False
    for np_, perturb, payloads in ((2, 0, []), (4, 5, ["--phantom"])):
        split = {}
        # --traffic is for the alltoallv/ algorithms alone: they run apart.
        for part in ([n for n in names if not n.startswith("alltoallv/")],
                     [n for n in names if n.startswith("alltoallv/")]):
            if not part:
                continue
            r = subprocess.run([mpirun, "--oversubscribe", "-np", str(np_), dist, "--machine", machine, "--algorithms",
                                ",".join(part), "--sizes", ",".join(sizes), "--perturb", str(perturb), "--format",
                                "json"] + payloads + traffic(part), capture_output=True, text=True, env=env)
            if r.returncode != 0:
                sys.exit(f"{np_} processes: exit status {r.returncode}\n{r.stderr[-3000:]}")
            split.update({(x["algorithm"], x["size"]): x for x in json.loads(r.stdout)})
        same = 0
        for key, ref in ran.items():
            got = split.get(key)
            if got is None:
                print(f"{np_} processes: {key} missing")
                failed = True
            elif "error" in got:
                print(f"{np_} processes: {key} failed: {got['error']}")
                failed = True
            elif any(got[f] != ref[f] for f in FIGURES):
                print(f"{np_} processes: {key} differs: {[(f, got[f], ref[f]) for f in FIGURES if got[f] != ref[f]]}")
                failed = True
            else:
                same += 1
        for key, got in split.items():
            if key in single and single[key] is None and "error" not in got:
                print(f"{np_} processes: {key} ran split but fails in one process")
                failed = True
        how = "phantom payloads, perturbed" if perturb else "real payloads"
        print(f"{machine}, {np_} processes, {how}: {same} of {len(ran)} runs the same")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
