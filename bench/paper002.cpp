// Paper 002 (Díaz de Cerio, Valero-García, González, "Complete Exchange Algorithms for Meshes and
// Tori Using a Systematic Approach"): sweeps of block size and pipelining degree on 2-D and 3-D
// meshes and tori, one-port and all-port, with the analytic cost (algorithms/cost002.hpp) beside
// the emulated time, the best degree per scenario and block size, and section 5's claim ("in many
// cases the proposed algorithms are about twice as fast as the best previous proposal") checked
// against the project's other all-to-all algorithms.
//
//   paper002 [--machines a;b] [--sizes 16,256,...] [--csv FILE]
#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/cost002.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using namespace touchstone;

// The previous proposals: direct sends, and the two pairwise exchanges (xor partners, and MPI's
// shift "pairwise" algorithm, which is paper 000's linear permutations).
const std::vector<std::string> kPrevious = {"alltoall/1-lev-dir", "alltoall/1-lev-xor", "alltoall/1-lev-lin"};

double emulated_us(const Machine& m, const std::string& alg, std::size_t L) {
  RunOptions o;
  o.phantom_payloads = true;
  const auto& a = algorithms::find(alg);
  return to_us(run(m, [&](Proc& p) { a.program(p, algorithms::Args{L, 0, false}); }, o).makespan);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Paper 002 reproduction: CC-cube and pipelined CC-cube complete exchange"};
  std::vector<std::string> machines = {"mesh:8x8",         "mesh:8x8,ports=all",  "torus:8x8",  "torus:8x8,ports=all",
                                       "mesh:4x4x4",       "mesh:4x4x4,ports=all", "torus:4x4x4", "torus:4x4x4,ports=all"};
  std::vector<std::size_t> sizes = {16, 64, 256, 1024, 4096};
  std::string csv;
  app.add_option("--machines", machines, "machines (separated by ';')")->delimiter(';');
  app.add_option("--sizes", sizes, "block sizes in bytes")->delimiter(',');
  app.add_option("--csv", csv, "also write every cell to this CSV file");
  CLI11_PARSE(app, argc, argv);
  try {
    std::ofstream out;
    if (!csv.empty()) {
      out.open(csv);
      if (!out) throw UsageError(fmt::format("cannot write '{}'", csv));
      out << "machine,block_bytes,algorithm,analytic_us,emulated_us\n";
    }
    fmt::print("{:<22} {:>5} | {:>17} | {:>17} | {:>6} {:>7} | {:>17} {:>9} | {:>5}\n", "machine", "L",
               "cc-cube model/emu", "best Q model/emu", "best Q", "(model)", "previous model/emu", "which", "ratio");
    int wins = 0, twice = 0, cells = 0;
    for (const auto& spec : machines) {
      const Machine m = parse_machine(spec);
      const int blocks = m.nodes() / 2;
      std::vector<std::string> algs = {"alltoall/cc-cube"};
      for (int q = 2; q <= blocks; q *= 2) algs.push_back(fmt::format("alltoall/pipelined-cc-cube({})", q));
      for (const auto& a : kPrevious) algs.push_back(a);
      for (std::size_t L : sizes) {
        std::map<std::string, std::pair<double, double>> t;  // analytic, emulated
        for (const auto& a : algs) {
          t[a] = {to_us(algorithms::alltoall_cost(a, m, L)), emulated_us(m, a, L)};
          if (out) out << fmt::format("\"{}\",{},\"{}\",{:.3f},{:.3f}\n", spec, L, a, t[a].first, t[a].second);
        }
        // Best pipelining degree (cc-cube is degree 1), by emulation and by the model.
        std::string best = "alltoall/cc-cube", best_model = best;
        for (const auto& a : algs) {
          if (a.find("cc-cube") == std::string::npos) continue;
          if (t[a].second < t[best].second) best = a;
          if (t[a].first < t[best_model].first) best_model = a;
        }
        auto degree = [](const std::string& a) {
          return a == "alltoall/cc-cube" ? std::string("1") : a.substr(a.find('(') + 1, a.size() - a.find('(') - 2);
        };
        std::string prev = kPrevious[0];
        for (const auto& a : kPrevious)
          if (t[a].second < t[prev].second) prev = a;
        const double ratio = t[prev].second / t[best].second;
        ++cells;
        wins += ratio > 1.0;
        twice += ratio >= 1.8;
        fmt::print("{:<22} {:>5} | {:>8.1f} {:>8.1f} | {:>8.1f} {:>8.1f} | {:>6} {:>7} | {:>8.1f} {:>8.1f} {:>9} | {:>5.2f}\n",
                   spec, L, t["alltoall/cc-cube"].first, t["alltoall/cc-cube"].second, t[best].first, t[best].second,
                   degree(best), degree(best_model), t[prev].first, t[prev].second, prev.substr(9), ratio);
      }
    }
    fmt::print("\nTimes in us; model = algorithms/cost002.hpp, emu = emulated makespan. best Q: the pipelining degree "
               "(1 = cc-cube) with the smallest emulated time; (model): the one the model picks.\n");
    fmt::print("ratio = best previous / best CC-cube (emulated). CC-cube faster in {} of {} cells; at least 1.8x "
               "(\"about twice as fast\") in {}.\n",
               wins, cells, twice);
  } catch (const std::exception& e) {
    fmt::print(stderr, "paper002: {}\n", e.what());
    return 1;
  }
  return 0;
}
