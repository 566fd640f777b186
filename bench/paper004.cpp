// Paper 004 (Jacunski, Sadayappan, Panda, "All-to-all broadcast on switch-based clusters of
// workstations") on the emulated switch clusters.
//
//   paper004 table2      Table 2: 256-flit blocks, 32 nodes on 1 switch, 16+16 and 21+11 on 2,
//                        ours beside the paper's, with section 3.2's t_SB and t_combine
//   paper004 irregular   all algorithms on 128-node, 10-switch irregular networks (section 5.3),
//                        mean and spread over seeds
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/allgather.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using namespace touchstone;

double run_us(const std::string& machine, const std::string& algorithm, std::size_t size, std::uint64_t seed = 1) {
  const Machine m = parse_machine(machine);
  const auto& alg = algorithms::find(algorithm);
  RunOptions o;
  o.seed = seed;
  return to_us(run(m, [&](Proc& p) { alg.program(p, algorithms::Args{size, 0, true}); }, o).makespan);
}

// Table 2 as published (us); -1 = "-".
struct Row {
  const char* paper_name;
  const char* ours;
  double paper[3];
};
const Row kTable2[] = {{"Combining", "allgather/combining", {139.69, 249.16, 593.14}},
                       {"SB", "allgather/SB", {137.79, 1079.47, 1082.24}},
                       {"RO-Ring", "allgather/RO-ring", {205.78, 1204.24, 1088.22}},
                       {"SO-Ring", "allgather/SO-ring", {205.78, 206.84, 206.84}},
                       {"LS2", "allgather/LS2", {-1, 141.64, 184.24}}};

// Ranks (1 = fastest) of the values present.
std::vector<int> ranks(const std::vector<double>& v) {
  std::vector<int> r(v.size(), 0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0) continue;
    r[i] = 1;
    for (std::size_t j = 0; j < v.size(); ++j) r[i] += v[j] >= 0 && v[j] < v[i];
  }
  return r;
}

int table2(const std::string& placement, int seeds) {
  const std::size_t flits = 256;
  const std::vector<std::string> base = {"switch:32", "switch2:16+16", "switch2:21+11"};
  const char* titles[] = {"1-switch (32)", "balanced 16+16", "unbalanced 21+11"};
  fmt::print("Paper 004, Table 2: all-to-all broadcast of 256-flit blocks (us); placement of ranks on the\n"
             "2-switch networks: {}{}\n\n", placement, placement == "random" ? fmt::format(" (mean of seeds 1..{})", seeds) : "");
  std::vector<std::vector<double>> ours(std::size(kTable2), std::vector<double>(3, -1));
  for (std::size_t r = 0; r < std::size(kTable2); ++r)
    for (std::size_t c = 0; c < 3; ++c) {
      if (kTable2[r].paper[c] < 0) continue;
      if (c == 0 || placement == "block") {
        ours[r][c] = run_us(base[c], kTable2[r].ours, flits);
      } else {
        double sum = 0;
        for (int s = 1; s <= seeds; ++s) sum += run_us(fmt::format("{},placement={},seed={}", base[c], placement, s), kTable2[r].ours, flits);
        ours[r][c] = sum / seeds;
      }
    }
  fmt::print("{:<10}", "algorithm");
  for (auto t : titles) fmt::print(" | {:>26}", t);
  fmt::print("\n{:<10}", "");
  for (int c = 0; c < 3; ++c) fmt::print(" | {:>8} {:>8} {:>8}", "ours", "paper", "ratio");
  fmt::print("\n");
  for (std::size_t r = 0; r < std::size(kTable2); ++r) {
    fmt::print("{:<10}", kTable2[r].paper_name);
    for (std::size_t c = 0; c < 3; ++c) {
      if (kTable2[r].paper[c] < 0) fmt::print(" | {:>8} {:>8} {:>8}", "-", "-", "");
      else fmt::print(" | {:>8.2f} {:>8.2f} {:>8.2f}", ours[r][c], kTable2[r].paper[c], ours[r][c] / kTable2[r].paper[c]);
    }
    fmt::print("\n");
  }
  fmt::print("\nRanks (1 = fastest), ours / paper:\n");
  for (std::size_t c = 0; c < 3; ++c) {
    std::vector<double> o, p;
    for (std::size_t r = 0; r < std::size(kTable2); ++r) o.push_back(ours[r][c]), p.push_back(kTable2[r].paper[c]);
    const auto ro = ranks(o), rp = ranks(p);
    fmt::print("  {:<18}", titles[c]);
    bool same = true;
    for (std::size_t r = 0; r < std::size(kTable2); ++r) {
      if (p[r] < 0) continue;
      fmt::print(" {}={}/{}", kTable2[r].paper_name, ro[r], rp[r]);
      same &= ro[r] == rp[r];
    }
    fmt::print("  {}\n", same ? "same order" : "ORDER DIFFERS");
  }
  // Section 3.2 in the machine's terms: L = t_hop + 256 * 16 ns, o = C_send = C_recv.
  const Machine m = parse_machine("switch:32");
  const double L = to_us(m.net.hop_time + static_cast<Time>(flits) * m.net.link_byte_time);
  const double o = to_us(m.costs.send_overhead);
  fmt::print("\nSection 3.2 with L = {:.3f} us, o = {:.3f} us (P = 32): t_SB = {:.2f} (emulated {:.2f}), "
             "t_combine = {:.2f} (emulated {:.2f})\n",
             L, o, algorithms::t_sb(32, L, o), ours[1][0], algorithms::t_combine(32, L, o), ours[0][0]);
  return 0;
}

int irregular(int seeds) {
  const char* algs[] = {"allgather/combining", "allgather/SB", "allgather/RO-ring", "allgather/SO-ring", "allgather/LS", "allgather/LR"};
  fmt::print("Paper 004, section 5.3: 128 nodes on 10 switches (7..21 nodes, 1..5 links each, at most 2\n"
             "between two switches), 256-flit blocks, seeds 1..{} (network and rank placement block)\n\n", seeds);
  fmt::print("{:<22} {:>10} {:>10} {:>10} {:>10}\n", "algorithm", "mean us", "min", "max", "sd");
  for (const char* a : algs) {
    std::vector<double> v;
    for (int s = 1; s <= seeds; ++s)
      v.push_back(run_us(fmt::format("irregular:switches=10,nodes=7-21,links=1-5,parallel=2,total=128,seed={}", s), a, 256, static_cast<std::uint64_t>(s)));
    double mean = 0, sd = 0;
    for (double x : v) mean += x / static_cast<double>(v.size());
    for (double x : v) sd += (x - mean) * (x - mean) / static_cast<double>(v.size());
    fmt::print("{:<22} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f}\n", a, mean, *std::min_element(v.begin(), v.end()),
               *std::max_element(v.begin(), v.end()), std::sqrt(sd));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Paper 004 reproductions: all-to-all broadcast on switch-based clusters"};
  app.require_subcommand(1);
  std::string placement = "cyclic";  // docs/paper004.md: the placement that fits Table 2 best
  int seeds = 10;
  auto* t2 = app.add_subcommand("table2", "Table 2 beside the paper's");
  t2->add_option("--placement", placement, "ranks on the 2-switch networks: block, cyclic or random")->check(CLI::IsMember({"block", "cyclic", "random"}));
  t2->add_option("--seeds", seeds, "seeds for random placement")->check(CLI::Range(1, 1000));
  auto* ir = app.add_subcommand("irregular", "128-node, 10-switch irregular networks (section 5.3)");
  ir->add_option("--seeds", seeds, "networks (seeds 1..N)")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    if (*t2) return table2(placement, seeds);
    return irregular(seeds);
  } catch (const std::exception& e) {
    fmt::print(stderr, "paper004: {}\n", e.what());
    return 1;
  }
}
