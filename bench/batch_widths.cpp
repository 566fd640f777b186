// Batch widths (docs/parallel.md, "Order of work", step 1): how many VPs resume at one virtual
// time, for catalog algorithms. VPs resumed at the same time could run their code concurrently
// with the same results (stage 1 of the plan), so these bound what running VP code on W host
// cores could gain: segments / rounds(W), where rounds(W) = sum over instants of ceil(width / W),
// if every segment cost the same host time. Virtual figures only: the output depends on the model,
// never on the host.
//
//   build/bin/batch_widths --machine mesh:16x16 --algorithms alltoall/all,scatter/all,gather/all --sizes 16,4096
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using touchstone::BatchStats;

std::string bound(const BatchStats& b, std::size_t i) {
  return b.rounds[i] ? fmt::format("{:.2f}", static_cast<double>(b.segments) / static_cast<double>(b.rounds[i])) : "-";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"batch widths: VPs resumed per virtual instant, and the speed-up bound of running VP code on W cores"};
  std::string machine = "mesh:16x16", list = "alltoall/all,scatter/all,gather/all";
  std::vector<std::size_t> sizes = {16, 4096};
  app.add_option("--machine", machine, "machine spec")->capture_default_str();
  app.add_option("--algorithms", list, "comma-separated names, or COLLECTIVE/all")->capture_default_str();
  app.add_option("--sizes", sizes, "message sizes in bytes")->delimiter(',')->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    const touchstone::Machine m = touchstone::parse_machine(machine);
    touchstone::RunOptions o;
    o.phantom_payloads = true;  // the batches do not depend on the bytes
    fmt::print("{} ({} VPs), phantom payloads; bound(W) = segments / sum over instants of ceil(width / W)\n", machine,
               m.nodes());
    fmt::print("{:<28} {:>6} {:>10} {:>9} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6}\n", "algorithm", "size", "segments",
               "instants", "mean", "widest", "W=2", "W=4", "W=8", "W=16");
    for (const auto* a : touchstone::algorithms::select(list))
      for (const std::size_t size : sizes) {
        const touchstone::algorithms::Args args{size, 0, false};
        try {
          const auto r = touchstone::run(m, [&](touchstone::Proc& p) { a->program(p, args); }, o);
          const BatchStats& b = r.stats.batches;
          fmt::print("{:<28} {:>6} {:>10} {:>9} {:>7.2f} {:>7} {:>6} {:>6} {:>6} {:>6}\n", a->name, size, b.segments,
                     b.instants, static_cast<double>(b.segments) / static_cast<double>(b.instants), b.widest,
                     bound(b, 0), bound(b, 1), bound(b, 2), bound(b, 3));
        } catch (const touchstone::Error& e) {
          fmt::print("{:<28} {:>6} not run: {}\n", a->name, size, e.what());
        }
        std::fflush(stdout);
      }
  } catch (const touchstone::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
