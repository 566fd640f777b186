// Paper 002 (Díaz de Cerio, Valero-García, González, "Complete Exchange Algorithms for Meshes and
// Tori Using a Systematic Approach"): sweeps of block size and pipelining degree on 2-D and 3-D
// meshes and tori, one-port and all-port, with the analytic cost (algorithms/cost002.hpp) beside
// the emulated time, the best degree per scenario and block size, and section 5's claim ("in many
// cases the proposed algorithms are about twice as fast as the best previous proposal") checked
// against the project's other all-to-all algorithms.
//
//   paper002 [--machines a;b] [--sizes 16,256,...] [--csv FILE] [--jobs N]
#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/cost002.hpp"
#include "algorithms/registry.hpp"
#include "tools/experiment/experiment.hpp"
#include "tools/parse_command_line.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using namespace touchstone;

// The previous proposals: direct sends, and the two pairwise exchanges (xor partners, and MPI's
// shift "pairwise" algorithm, which is paper 000's linear permutations).
const std::vector<std::string> kPrevious = {"alltoall/1-lev-dir", "alltoall/1-lev-xor", "alltoall/1-lev-lin"};

// The algorithms of one machine: CC-cube, its pipelined versions for every degree up to the number
// of blocks, and the previous proposals.
std::vector<std::string> algorithms_for(const Machine& m) {
  std::vector<std::string> algs = {"alltoall/cc-cube"};
  for (int q = 2; q <= m.nodes() / 2; q *= 2) algs.push_back(fmt::format("alltoall/pipelined-cc-cube({})", q));
  algs.insert(algs.end(), kPrevious.begin(), kPrevious.end());
  return algs;
}

std::string degree(const std::string& a) {
  return a == "alltoall/cc-cube" ? std::string("1") : a.substr(a.find('(') + 1, a.size() - a.find('(') - 2);
}

// The analytic and emulated times (us) of one (machine, block size) scenario, by algorithm.
using Scenario = std::map<std::string, std::pair<double, double>>;

// Prints one scenario's row; returns best previous / best CC-cube (emulated).
double print_row(const std::string& spec, std::size_t L, const std::vector<std::string>& algs, Scenario& t) {
  // Best pipelining degree (cc-cube is degree 1), by emulation and by the model; ties go to the
  // lower degree.
  std::string best = "alltoall/cc-cube", best_model = best;
  for (const auto& a : algs) {
    if (a.find("cc-cube") == std::string::npos) continue;
    if (t[a].second < t[best].second) best = a;
    if (t[a].first < t[best_model].first) best_model = a;
  }
  std::string prev = kPrevious[0];
  for (const auto& a : kPrevious)
    if (t[a].second < t[prev].second) prev = a;
  const double ratio = t[prev].second / t[best].second;
  fmt::print("{:<22} {:>5} | {:>8.1f} {:>8.1f} | {:>8.1f} {:>8.1f} | {:>6} {:>7} | {:>8.1f} {:>8.1f} {:>9} | {:>5.2f}\n", spec, L,
             t["alltoall/cc-cube"].first, t["alltoall/cc-cube"].second, t[best].first, t[best].second, degree(best),
             degree(best_model), t[prev].first, t[prev].second, prev.substr(9), ratio);
  return ratio;
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
  int parallel = 0;
  app.add_option("--jobs", parallel, "emulations at once (0: the host's cores)")->check(CLI::Range(0, 1024));
  if (const auto code = touchstone::cli::parse_command_line(app, argc, argv)) return *code;
  try {
    std::ofstream out;
    if (!csv.empty()) {
      out.open(csv);
      if (!out) throw UsageError(fmt::format("cannot write '{}'", csv));
      out << "machine,block_bytes,algorithm,analytic_us,emulated_us\n";
    }
    fmt::print("{:<22} {:>5} | {:>17} | {:>17} | {:>6} {:>7} | {:>17} {:>9} | {:>5}\n", "machine", "L",
               "cc-cube model/emu", "best Q model/emu", "best Q", "(model)", "previous model/emu", "which", "ratio");
    // Every emulation of every scenario is one job of the experiment harness, run in parallel.
    std::vector<Machine> ms;
    for (const auto& spec : machines) ms.push_back(parse_machine(spec));
    std::vector<experiment::Job> jobs;
    RunOptions phantom;
    phantom.phantom_payloads = true;
    for (const auto& m : ms)
      for (std::size_t L : sizes)
        for (const auto& a : algorithms_for(m)) jobs.push_back({&m, &algorithms::find(a), algorithms::Args{L, 0, false}, phantom});
    const auto outcomes = experiment::run_jobs(jobs, {.parallel = parallel});
    int wins = 0, twice = 0, cells = 0;
    auto next = outcomes.begin();
    for (std::size_t i = 0; i < ms.size(); ++i) {
      const auto algs = algorithms_for(ms[i]);
      for (std::size_t L : sizes) {
        Scenario t;
        for (const auto& a : algs) {
          const auto& o = *next++;
          if (!o.record) throw Error(fmt::format("{} with {} bytes on {}: {}", a, L, machines[i], o.error));
          t[a] = {to_us(algorithms::alltoall_cost(a, ms[i], L)), to_us(o.record->result.makespan)};
          if (out) out << fmt::format("\"{}\",{},\"{}\",{:.3f},{:.3f}\n", machines[i], L, a, t[a].first, t[a].second);
        }
        const double ratio = print_row(machines[i], L, algs, t);
        ++cells;
        wins += ratio > 1.0;
        twice += ratio >= 1.8;
      }
    }
    fmt::print("\nTimes in us; model = algorithms/cost002.hpp, emu = emulated makespan. best Q: the pipelining degree "
               "(1 = cc-cube) with the smallest emulated time; (model): the one the model picks.\n");
    fmt::print("ratio = best previous / best CC-cube (emulated). CC-cube faster in {} of {} cells; at least 1.8x "
               "(\"about twice as fast\") in {}.\n",
               wins, cells, twice);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
