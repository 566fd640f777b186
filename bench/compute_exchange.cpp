// A program that computes between exchanges (docs/performance.md, "Programs that compute"): every
// rank relaxes its own vector of doubles for a while, then trades its edge values with its two
// ring neighbours (irecv, isend, waitall), ITERATIONS times. Its computing is the program of the
// instant that completes its receives, so with more host cores the ranks compute at once
// (docs/parallel.md, "The programs of an instant"). Runs it on 1 host core and on N, checks that
// both runs are the same (trace_hash, makespan, every rank's values) and prints the wall times.
//
//   build/bin/compute_exchange [--machine torus:8x8] [--points 20000] [--iterations 20] [--host-cores N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

int main(int argc, char** argv) {
  CLI::App app{"A program that computes between exchanges, on 1 host core and on N: the same run, and the wall times"};
  std::string machine_spec = "torus:8x8";
  int points = 20000, iterations = 20, cores = available_host_cores();
  app.add_option("--machine", machine_spec, "machine")->capture_default_str();
  app.add_option("--points", points, "doubles per rank; each iteration relaxes them 20 times")
      ->check(CLI::Range(3, 1 << 26))
      ->capture_default_str();
  app.add_option("--iterations", iterations, "exchanges")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("--host-cores", cores, "host cores of the second run")->check(CLI::Range(2, 1024))->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const Machine machine = parse_machine(machine_spec);

  std::vector<double> values;
  const Program program = [&](Proc& p) {
    const int n = p.size(), me = p.rank(), left = (me + n - 1) % n, right = (me + 1) % n;
    const auto w = static_cast<std::size_t>(points);
    std::vector<double> u(w, me), v(w);
    for (int it = 0; it < iterations; ++it) {
      for (int sweep = 0; sweep < 20; ++sweep) {
        for (std::size_t i = 1; i + 1 < w; ++i) v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) + 1e-9 * std::sqrt(u[i] + 1);
        u.swap(v);
      }
      double edge[2] = {u[1], u[w - 2]}, halo[2] = {0, 0};
      Request rq[4] = {p.irecv(left, it, std::as_writable_bytes(std::span(halo, 1))),
                       p.irecv(right, it, std::as_writable_bytes(std::span(halo + 1, 1))),
                       p.isend(right, it, std::as_bytes(std::span(edge, 1))),
                       p.isend(left, it, std::as_bytes(std::span(edge + 1, 1)))};
      p.waitall(rq);
      u[0] = halo[0];
      u[w - 1] = halo[1];
    }
    values[static_cast<std::size_t>(me)] = u[w / 2];
  };
  struct Measured {
    RunResult result;
    std::vector<double> values;
    double wall_s;
  };
  auto measure = [&](int host_cores) {
    values.assign(static_cast<std::size_t>(machine.nodes()), 0.0);
    RunOptions o;
    o.host_cores = host_cores;
    const auto t0 = std::chrono::steady_clock::now();
    Measured m{run(machine, program, o), {}, 0};
    m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.values = values;
    return m;
  };
  const Measured one = measure(1), many = measure(cores);
  const bool same = one.result.trace_hash == many.result.trace_hash && one.result.makespan == many.result.makespan &&
                    one.values == many.values;
  fmt::print("{} ranks on {}, {} points, {} iterations: makespan {:.3f} us, trace_hash {:016x}\n", machine.nodes(),
             machine_spec, points, iterations, to_us(one.result.makespan), one.result.trace_hash);
  fmt::print("1 host core:  {:.3f} s\n{} host cores: {:.3f} s ({} instants at once), {:.2f}x, {}\n", one.wall_s, cores,
             many.wall_s, many.result.instants_at_once, one.wall_s / many.wall_s,
             same ? "the same run" : "NOT the same run");
  return same ? 0 : 1;
}
