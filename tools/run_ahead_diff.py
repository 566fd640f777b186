#!/usr/bin/env python3
"""Differential check of run-ahead (docs/model.md 1.6): runs random machines and algorithms with
run-ahead and with --explain (an observer, which turns it off: one event per hop) and reports any
difference in exit status, makespan, blocked time or trace_hash.

    tools/run_ahead_diff.py [--touchstone build/bin/touchstone] [--seed 1] [--runs 300]

Prints one line per difference and a summary; exits 1 if any run differed."""
import argparse
import random
import subprocess
import sys

TOPOLOGIES = ['mesh:4x4', 'mesh:8x8', 'torus:4x4', 'torus:6x6', 'mesh:2x4x4', 'delta:8x8', 'cm5:32', 'switch:16',
              'switch2:8+8']


def machine(rng):
    topo = rng.choice(TOPOLOGIES)
    opts = []
    if not topo.startswith(('delta', 'cm5', 'switch')) or rng.random() < 0.5:
        if rng.random() < 0.7:
            opts.append('hop_ns=%d' % rng.choice([50, 100, 500, 1000, 2000, 3000, 5000]))
        if rng.random() < 0.5:
            opts.append('packet=%d+%d' % rng.choice([(16, 4), (32, 8), (64, 16), (256, 32), (1024, 32)]))
    if rng.random() < 0.3:
        opts.append('arbitration=' + rng.choice(['fifo', 'random', 'round-robin']))
    if rng.random() < 0.2:
        opts.append('ports=2')
    if rng.random() < 0.15 and not topo.startswith(('switch', 'cm5')):
        opts.append('switching=cut-through,router_buffer=%d' % rng.choice([64, 256, 2048]))
    if rng.random() < 0.1:
        opts.append('buffer=%d' % rng.choice([1024, 8192]))
    return topo + (',' + ','.join(opts) if opts else '')


def outcome(touchstone, spec, algorithm, size, extra):
    r = subprocess.run([touchstone, 'run', '--machine', spec, '--algorithm', algorithm, '--size', str(size),
                        '--time-limit', '100'] + extra, capture_output=True, text=True)
    fields = dict(line.split(None, 1) for line in r.stdout.splitlines() if len(line.split(None, 1)) == 2)
    return r.returncode, fields.get('makespan_us'), fields.get('blocked_us'), fields.get('trace_hash')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--touchstone', default='build/bin/touchstone')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--runs', type=int, default=300)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    listing = subprocess.run([a.touchstone, 'list', 'algorithms'], capture_output=True, text=True, check=True).stdout
    algorithms = [w for w in listing.split() if '/' in w and not w.startswith(('selftest', 'alltoallv'))]
    differ = ran = 0
    for _ in range(a.runs):
        spec, algorithm, size = machine(rng), rng.choice(algorithms), rng.choice([8, 16, 50, 100, 300, 1000, 3000])
        ahead = outcome(a.touchstone, spec, algorithm, size, [])
        per_hop = outcome(a.touchstone, spec, algorithm, size, ['--explain'])
        ran += ahead[0] == 0
        if ahead != per_hop:
            differ += 1
            print(f'differs: --machine {spec} --algorithm {algorithm} --size {size}: {ahead} vs {per_hop}')
    print(f'{a.runs} runs ({ran} completed, the others refused by both alike), {differ} differ')
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())
