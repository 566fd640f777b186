// Paper 004 (Jacunski, Sadayappan, Panda, "All-to-all broadcast on switch-based clusters of
// workstations") on the emulated switch clusters.
//
//   paper004 table2      Table 2: 256-flit blocks, 32 nodes on 1 switch, 16+16 and 21+11 on 2,
//                        ours (mean and spread over run seeds) beside the paper's, with section
//                        3.2's t_SB and t_combine
//   paper004 placements  lower bounds of RO-ring and combining over every rank placement on the
//                        2-switch networks, against the paper's figures
//   paper004 irregular   all algorithms on 128-node, 10-switch irregular networks (section 5.3)
//                        at the paper's stated 5 us start-up, mean and spread over seeds, and per
//                        network LS against SO-ring and the SO-ring step against Table 2's
//                        single-switch step
//   paper004 claims      Table 2, section 3's crossovers and section 5.3's statements beside ours;
//                        a claim that flips on an open variant of the switch presets or of the
//                        irregular networks is undecided (--preset-only: the presets alone)
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algorithms/allgather.hpp"
#include "algorithms/registry.hpp"
#include "claim_rows.hpp"
#include "cli/parse_command_line.hpp"
#include "touchstone/experiment/claims.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using namespace touchstone;

// The emulations run at once (--jobs; 0: the host's cores).
int g_parallel = 0;

// A spec with options added, in order (a later option overrides an earlier one).
MachineSpec with(MachineSpec spec, const std::vector<MachineOption>& options) {
  spec.options.insert(spec.options.end(), options.begin(), options.end());
  return spec;
}

// What a run adds to every machine it builds, after the machine's own options: the user's
// (--options ",send_us=2.5,recv_us=2.5", the leading comma optional), then an open variant's
// (touchstone::open_variants) on the machines whose family leaves that variant open, so that a
// variant of the switch presets leaves the irregular networks as they are and the other way round.
struct Additions {
  std::string user;     // as written
  std::string variant;  // the variant's options as open_variants gives them; empty: the preset
  MachineSpec operator()(MachineSpec spec) const {
    const auto open = open_variants(spec);  // of the machine as named, before any option is added
    if (!user.empty() && user != ",") spec.add_options(user.front() == ',' ? user.substr(1) : user);
    if (!variant.empty() &&
        std::any_of(open.begin(), open.end(), [&](const OpenVariant& v) { return v.options == variant; }))
      spec.add_options(variant);
    return spec;
  }
};

// One emulation: `algorithm` on `machine` with blocks of `size` flits, run seed `seed`.
struct Emulation {
  MachineSpec machine;
  std::string algorithm;
  std::size_t size = 256;
  std::uint64_t seed = 1;
};

// Every emulation as one job of the experiment harness, g_parallel at once; virtual times (us) in
// their order. The machines are taken exactly as given.
std::vector<double> run_all_us(const std::vector<Emulation>& es) {
  std::vector<Machine> machines;
  machines.reserve(es.size());  // jobs point into it
  std::vector<experiment::Job> jobs;
  for (const auto& e : es) {
    machines.push_back(build_machine(e.machine));
    experiment::Job j{&machines.back(), &algorithms::find(e.algorithm), algorithms::Args{e.size, 0, true}, {}};
    j.options.seed = e.seed;
    jobs.push_back(std::move(j));
  }
  std::vector<double> us;
  for (const auto& o : experiment::run_jobs(jobs, {.parallel = g_parallel})) {
    if (!o.record) throw Error(fmt::format("{} on {}: {}", o.job->algorithm->name, o.job->machine->name, o.error));
    us.push_back(to_us(o.record->result.makespan));
  }
  return us;
}

double run_us(const MachineSpec& machine, const std::string& algorithm, std::size_t size) {
  return run_all_us({{machine, algorithm, size, 1}}).front();
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

// Table 2 for run seeds 1..seeds: runs[c][s - 1][r] is cell (r, c) of seed s (-1 where the paper
// has none), `mean[r][c]` their mean over the seeds. The arbitration of the switches draws from the
// seed, and so does a random placement (seed=s).
struct Table2Runs {
  std::vector<std::vector<std::vector<double>>> runs;
  std::vector<std::vector<double>> mean;
};
Table2Runs table2_runs(const std::string& placement, const std::string& arbitration, int seeds, const Additions& add) {
  const MachineSpec base[] = {MachineSpec::parse("switch:32"), MachineSpec::parse("switch2:16+16"),
                              MachineSpec::parse("switch2:21+11")};
  const std::size_t R = std::size(kTable2), S = static_cast<std::size_t>(seeds);
  std::vector<Emulation> es;
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t c = 0; c < 3; ++c) {
      if (kTable2[r].paper[c] < 0) continue;
      for (int s = 1; s <= seeds; ++s) {
        MachineSpec machine = with(base[c], {{"arbitration", arbitration}});
        if (c > 0) machine = with(machine, {{"placement", placement}, {"seed", std::to_string(s)}});
        es.push_back({add(machine), kTable2[r].ours, 256, static_cast<std::uint64_t>(s)});
      }
    }
  const auto us = run_all_us(es);
  Table2Runs t{std::vector<std::vector<std::vector<double>>>(3, std::vector<std::vector<double>>(S, std::vector<double>(R, -1))),
               std::vector<std::vector<double>>(R, std::vector<double>(3, -1))};
  auto next = us.begin();
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t c = 0; c < 3; ++c) {
      if (kTable2[r].paper[c] < 0) continue;
      double sum = 0;
      for (std::size_t s = 0; s < S; ++s) sum += t.runs[c][s][r] = *next++;
      t.mean[r][c] = sum / seeds;
    }
  return t;
}

int table2(const std::string& placement, const std::string& arbitration, int seeds) {
  const std::size_t flits = 256;
  const char* titles[] = {"1-switch (32)", "balanced 16+16", "unbalanced 21+11"};
  fmt::print("Paper 004, Table 2: all-to-all broadcast of 256-flit blocks (us); placement of ranks on the\n"
             "2-switch networks: {}; arbitration: {}; ours = mean over run seeds 1..{}\n\n", placement, arbitration, seeds);
  const std::size_t R = std::size(kTable2);
  const auto [runs, ours] = table2_runs(placement, arbitration, seeds, {});
  fmt::print("{:<10}", "algorithm");
  for (auto t : titles) fmt::print(" | {:>26}", t);
  fmt::print("\n{:<10}", "");
  for (int c = 0; c < 3; ++c) fmt::print(" | {:>8} {:>8} {:>8}", "ours", "paper", "ratio");
  fmt::print("\n");
  for (std::size_t r = 0; r < R; ++r) {
    fmt::print("{:<10}", kTable2[r].paper_name);
    for (std::size_t c = 0; c < 3; ++c) {
      if (kTable2[r].paper[c] < 0) fmt::print(" | {:>8} {:>8} {:>8}", "-", "-", "");
      else fmt::print(" | {:>8.2f} {:>8.2f} {:>8.2f}", ours[r][c], kTable2[r].paper[c], ours[r][c] / kTable2[r].paper[c]);
    }
    fmt::print("\n");
  }
  fmt::print("\nSpread over the seeds (min .. max):\n");
  for (std::size_t r = 0; r < R; ++r) {
    fmt::print("{:<10}", kTable2[r].paper_name);
    for (std::size_t c = 0; c < 3; ++c) {
      if (kTable2[r].paper[c] < 0) {
        fmt::print(" | {:>26}", "-");
        continue;
      }
      double lo = 1e300, hi = 0;
      for (const auto& run : runs[c]) lo = std::min(lo, run[r]), hi = std::max(hi, run[r]);
      fmt::print(" | {:>26}", fmt::format("{:.2f} .. {:.2f}", lo, hi));
    }
    fmt::print("\n");
  }
  fmt::print("\nRanks (1 = fastest) of the means, ours / paper, and the seeds whose own order is the paper's:\n");
  for (std::size_t c = 0; c < 3; ++c) {
    std::vector<double> p;
    for (std::size_t r = 0; r < R; ++r) p.push_back(kTable2[r].paper[c]);
    std::vector<double> o;
    for (std::size_t r = 0; r < R; ++r) o.push_back(ours[r][c]);
    const auto ro = ranks(o), rp = ranks(p);
    int agree = 0;
    for (const auto& run : runs[c]) agree += ranks(run) == rp;
    fmt::print("  {:<18}", titles[c]);
    bool same = true;
    for (std::size_t r = 0; r < R; ++r) {
      if (p[r] < 0) continue;
      fmt::print(" {}={}/{}", kTable2[r].paper_name, ro[r], rp[r]);
      same &= ro[r] == rp[r];
    }
    fmt::print("  {}; {} of {} seeds\n", same ? "same order" : "ORDER DIFFERS", agree, seeds);
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

// Lower bounds over every rank placement on the 2-switch networks (docs/paper004.md, "Rank
// placement"). Bit r of x is rank r's switch. With one worm at a time per link direction and a
// block taking 256 x 16 ns on it, RO-ring needs >= 31 * c0 block times, where c0 is the number of
// ring edges r -> r+1 that cross in the busier direction (each edge carries 31 blocks), and
// combining needs >= W block times, W = the busier direction's sum over Fig. 5's steps of (blocks
// per message) x (messages that cross). Both algorithms are invariant under rotating the ranks, so
// rank 0 is on switch "0" (x's bit 0 clear); the other switch has n1 ranks.
struct PlacementBound {
  int min_w = -1;        // the smallest W among placements with this c0 (-1: none)
  std::uint32_t x = 0;   // one placement that reaches it
};
std::vector<PlacementBound> placement_bounds(int n1) {
  constexpr int kDist[5] = {1, 2, 4, 8, 16}, kBlocks[5] = {1, 2, 4, 8, 15};  // Fig. 5 for P = 32
  std::vector<PlacementBound> best(33);
  // Gosper's hack over the 31-bit masks with n1 bits set (ranks 1..31), shifted past rank 0.
  for (std::uint32_t v = (1u << n1) - 1; v < (1u << 31); ) {
    const std::uint32_t x = v << 1;
    int w[2] = {0, 0}, c0 = 0;
    for (int k = 0; k < 5; ++k) {
      const std::uint32_t y = (x >> kDist[k]) | (x << (32 - kDist[k]));  // bit r: switch of rank r + d
      const int up = std::popcount(~x & y), down = std::popcount(x & ~y);
      w[0] += kBlocks[k] * up;
      w[1] += kBlocks[k] * down;
      if (k == 0) c0 = std::max(up, down);
    }
    auto& b = best[static_cast<std::size_t>(c0)];
    if (b.min_w < 0 || std::max(w[0], w[1]) < b.min_w) b = {std::max(w[0], w[1]), x};
    if (n1 == 0) break;
    const std::uint32_t t = v | (v - 1);
    v = (t + 1) | (((~t & (0u - ~t)) - 1) >> (std::countr_zero(v) + 1));
  }
  return best;
}

int placements() {
  const Machine m = parse_machine("switch2:16+16");
  const double block = to_us(static_cast<Time>(256) * m.net.link_byte_time);
  fmt::print("Paper 004, Table 2: lower bounds over every placement of 32 ranks on two switches (one worm\n"
             "per link direction at a time, {:.3f} us per block): RO-ring >= 31 c0 blocks, combining >= W blocks\n", block);
  const struct {
    const char* title;
    std::vector<int> n1;  // ranks on the switch without rank 0
    double ro, comb;      // the paper's figures
  } nets[] = {{"balanced 16+16", {16}, 1204.24, 249.16}, {"unbalanced 21+11", {11, 21}, 1088.22, 593.14}};
  for (const auto& net : nets) {
    std::vector<PlacementBound> best(33);
    for (int n1 : net.n1) {
      const auto b = placement_bounds(n1);
      for (std::size_t c = 0; c < b.size(); ++c)
        if (b[c].min_w >= 0 && (best[c].min_w < 0 || b[c].min_w < best[c].min_w)) best[c] = b[c];
    }
    fmt::print("\n{} (paper: RO-ring {:.2f} us = {:.1f} blocks, combining {:.2f} us = {:.1f} blocks)\n", net.title, net.ro,
               net.ro / block, net.comb, net.comb / block);
    fmt::print("{:>4} {:>12} {:>7} {:>12}  {:>10}  {}\n", "c0", "RO-ring >=", "min W", "comb >=", "placement", "both below the paper's?");
    for (std::size_t c = 0; c < best.size(); ++c) {
      if (best[c].min_w < 0) continue;
      const double ro = 31.0 * static_cast<double>(c) * block, comb = best[c].min_w * block;
      fmt::print("{:>4} {:>12.2f} {:>7} {:>12.2f}  {:>10}  {}\n", c, ro, best[c].min_w, comb, fmt::format("{:08x}", best[c].x),
                 ro <= net.ro && comb <= net.comb ? "yes" : "no");
    }
  }
  return 0;
}


// The start-up t_s the paper states for Fig. 6, Table 2 and Table 3, charged as LogP's o (section
// 2.4: "overhead incurred by a node when sending or receiving a message") on every send and every
// receive: C_send = C_recv = t_s.
std::vector<MachineOption> startup_options(double ts_us) {
  return {{"send_us", fmt::format("{}", ts_us)}, {"recv_us", fmt::format("{}", ts_us)}};
}

// Section 5.3: "We again used a 5 microsecond startup time and 256 flit message length." The
// section 5.3 runs use it (C_send = C_recv = 5 us, also the irregular: machines' default, named here
// so that the runs say what they use); switch:P and switch2 keep the 1 us that Table 2's numbers
// need (docs/paper004.md, "The start-up"). --options given later override it.
constexpr double kSection53StartupUs = 5.0;

// One ring step on one switch as Table 2 publishes it: LR (= SO-ring) on 32 nodes over its 31 steps.
constexpr double kTable2RingStepUs = 205.78 / 31.0;

// The 128-node irregular networks of section 5.3, network `seed` (its arbitration draws too), at
// the section's stated start-up.
MachineSpec irregular_machine(int seed, const std::string& arbitration) {
  const MachineSpec s = MachineSpec::parse("irregular:switches=10,nodes=7-21,links=1-5,parallel=2,total=128");
  return with(with(s, {{"seed", std::to_string(seed)}, {"arbitration", arbitration}}),
              startup_options(kSection53StartupUs));
}

// Per network: every algorithm's time (us).
struct Network {
  int seed;
  std::map<std::string, double> us;
};
const char* const kIrregularAlgs[] = {"allgather/combining", "allgather/SB", "allgather/RO-ring", "allgather/SO-ring", "allgather/LS", "allgather/LR"};

std::vector<Network> irregular_runs(const std::string& arbitration, int seeds, const Additions& add) {
  std::vector<Emulation> es;
  for (int s = 1; s <= seeds; ++s)
    for (const char* a : kIrregularAlgs)
      es.push_back({add(irregular_machine(s, arbitration)), a, 256, static_cast<std::uint64_t>(s)});
  const auto us = run_all_us(es);
  std::vector<Network> v;
  auto next = us.begin();
  for (int s = 1; s <= seeds; ++s) {
    Network n{s, {}};
    for (const char* a : kIrregularAlgs) n.us[a] = *next++;
    v.push_back(std::move(n));
  }
  return v;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double x = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(x);
  return i + 1 < v.size() ? v[i] + (x - static_cast<double>(i)) * (v[i + 1] - v[i]) : v[i];
}

std::string distribution(const std::vector<double>& v, const char* fmt_one) {
  return fmt::format("min {} | q1 {} | median {} | q3 {} | max {}", fmt::format(fmt::runtime(fmt_one), quantile(v, 0)),
                     fmt::format(fmt::runtime(fmt_one), quantile(v, 0.25)), fmt::format(fmt::runtime(fmt_one), quantile(v, 0.5)),
                     fmt::format(fmt::runtime(fmt_one), quantile(v, 0.75)), fmt::format(fmt::runtime(fmt_one), quantile(v, 1)));
}

int irregular(const std::string& arbitration, int seeds, const std::string& options) {
  fmt::print(
      "Paper 004, section 5.3: 128 nodes on 10 switches (7..21 nodes, 1..5 links each, at most 2\n"
      "between two switches), 256-flit blocks, networks 1..{} (seed=N: network, rank placement, arbitration\n"
      "draws; placement random, the irregular default); arbitration: {}; start-up: the paper's {} us\n"
      "(C_send = C_recv = {} us){}\n\n",
      seeds, arbitration, kSection53StartupUs, kSection53StartupUs,
      options.empty() ? "" : "; then the options '" + options + "'");
  const auto nets = irregular_runs(arbitration, seeds, {options, ""});
  fmt::print("{:<22} {:>10} {:>10} {:>10} {:>10}\n", "algorithm", "mean us", "min", "max", "sd");
  for (const char* a : kIrregularAlgs) {
    std::vector<double> v;
    for (const auto& n : nets) v.push_back(n.us.at(a));
    double mean = 0, sd = 0;
    for (double x : v) mean += x / static_cast<double>(v.size());
    for (double x : v) sd += (x - mean) * (x - mean) / static_cast<double>(v.size());
    fmt::print("{:<22} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f}\n", a, mean, *std::min_element(v.begin(), v.end()),
               *std::max_element(v.begin(), v.end()), std::sqrt(sd));
  }
  const double step1 = kTable2RingStepUs;
  fmt::print("\nPer network: LS's gain over SO-ring and over the best other algorithm (their time / LS's), and the\n"
             "SO-ring step (SO-ring / 127) over the paper's single-switch ring step ({:.3f} us = Table 2's 205.78 / 31)\n\n", step1);
  fmt::print("{:>7} {:>9} {:>9} {:>9} {:>10} {:>11} {:>13}\n", "network", "LS us", "SO-ring", "RO-ring", "SO-ring/LS", "best/LS", "SO step/1-sw");
  std::vector<double> so_ls, best_ls, step;
  for (const auto& n : nets) {
    double best = INFINITY;
    for (const auto& [a, t] : n.us)
      if (std::string(a) != "allgather/LS") best = std::min(best, t);
    so_ls.push_back(n.us.at("allgather/SO-ring") / n.us.at("allgather/LS"));
    best_ls.push_back(best / n.us.at("allgather/LS"));
    step.push_back(n.us.at("allgather/SO-ring") / 127.0 / step1);
    fmt::print("{:>7} {:>9.1f} {:>9.1f} {:>9.1f} {:>10.3f} {:>11.3f} {:>13.3f}\n", n.seed, n.us.at("allgather/LS"), n.us.at("allgather/SO-ring"),
               n.us.at("allgather/RO-ring"), so_ls.back(), best_ls.back(), step.back());
  }
  fmt::print("\nSO-ring / LS:   {}\nbest / LS:      {}\nSO step / 1-sw: {}\n", distribution(so_ls, "{:.3f}"), distribution(best_ls, "{:.3f}"),
             distribution(step, "{:.3f}"));
  fmt::print("(the paper: LS 27.1% better than the other algorithms, i.e. best / LS = 1.372; its Table 3: SO step about 2.2)\n");
  return 0;
}

constexpr double kTol = 1.10;  // a number within 1.10x counts as reproduced
const char* const kColumns[] = {"1-switch", "balanced", "unbalanced"};
const std::string kClaimsPlacement = "cyclic";  // docs/paper004.md: the placement that fits Table 2 best

// "8,16" ("none" when empty).
std::string list(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s.empty() ? std::string("none") : s;
}

// The start-ups of section 3.3's crossover ("For all startup times of 5, 10, 20, and 30
// microseconds"), and the largest block searched for it: Fig. 6 stops at 1024 flits, but with
// 30 us on each side SB needs blocks whose transmission exceeds 2 x 30 us (3750 flits) to win.
constexpr double kCrossoverStartupsUs[] = {5.0, 10.0, 20.0, 30.0};
constexpr std::size_t kLargestCrossoverFlits = std::size_t{1} << 15;

// What the claims measure on the switch presets (switch:P, switch2:): Table 2 and section 3.
struct SwitchFigures {
  int seeds = 0;
  std::vector<std::vector<double>> table2;  // means over run seeds 1..seeds, [row][column]; -1: none
  double send_us = 0, recv_us = 0;          // switch:32's C_send and C_recv
  double sb_us = 0, lr_us = 0;              // SB and LR on switch:32, 256 flits
  // Fig. 6 at the preset's start-up [0] and at the paper's 5 us [1]: the P where combining is not
  // faster than SB at 128 flits, and where SB is not faster than combining at 1024.
  std::vector<int> not_combining_128[2], not_sb_1024[2];
  // Section 3.3 at each of kCrossoverStartupsUs on switch:32: combining best at 128 flits, and the
  // first size where SB is (0: none up to kLargestCrossoverFlits).
  bool combining_at_128[std::size(kCrossoverStartupsUs)] = {};
  std::size_t crossover[std::size(kCrossoverStartupsUs)] = {};
};

SwitchFigures switch_figures(const std::string& arbitration, int seeds, const Additions& add) {
  SwitchFigures f;
  f.seeds = seeds;
  f.table2 = table2_runs(kClaimsPlacement, arbitration, seeds, add).mean;
  const MachineSpec sw32 = add(MachineSpec::parse("switch:32"));
  const Machine sw = build_machine(sw32);
  f.send_us = to_us(sw.costs.send_overhead), f.recv_us = to_us(sw.costs.recv_overhead);
  f.sb_us = run_us(sw32, "allgather/SB", 256), f.lr_us = run_us(sw32, "allgather/LR", 256);
  for (int i = 0; i < 2; ++i)
    for (int P : {8, 16, 32}) {
      const MachineSpec m = with(add(MachineSpec::parse(fmt::format("switch:{}", P))),
                                 i == 0 ? std::vector<MachineOption>{} : startup_options(5.0));
      if (!(run_us(m, "allgather/combining", 128) < run_us(m, "allgather/SB", 128)))
        f.not_combining_128[i].push_back(P);
      if (!(run_us(m, "allgather/SB", 1024) < run_us(m, "allgather/combining", 1024))) f.not_sb_1024[i].push_back(P);
    }
  for (std::size_t i = 0; i < std::size(kCrossoverStartupsUs); ++i) {
    const MachineSpec m = with(sw32, startup_options(kCrossoverStartupsUs[i]));
    for (std::size_t flits = 128; flits <= kLargestCrossoverFlits && !f.crossover[i]; flits *= 2)
      if (run_us(m, "allgather/SB", flits) < run_us(m, "allgather/combining", flits)) f.crossover[i] = flits;
    f.combining_at_128[i] = run_us(m, "allgather/combining", 128) < run_us(m, "allgather/SB", 128);
  }
  return f;
}

using bench::ClaimRow;
using bench::Outcome;

// Table 2's cells and orders and section 3's statements, as rows over the switch figures.
std::vector<ClaimRow<SwitchFigures>> switch_claims() {
  std::vector<ClaimRow<SwitchFigures>> rows;
  // Table 2: every cell (mean over run seeds) and every column's order.
  for (std::size_t r = 0; r < std::size(kTable2); ++r)
    for (std::size_t c = 0; c < 3; ++c)
      if (kTable2[r].paper[c] >= 0)
        rows.push_back({fmt::format("table2.{}.{}", kTable2[r].paper_name, kColumns[c]),
                        "Table 2 (us; 256 flits, '5 microsecond startup')", "",
                        [r, c](const SwitchFigures& f) -> std::optional<Outcome> {
                          return Outcome{
                              "", false, f.table2[r][c],
                              c > 0 ? fmt::format("mean over run seeds 1..{}, {} placement", f.seeds, kClaimsPlacement)
                                    : ""};
                        },
                        kTol, kTable2[r].paper[c], "us"});
  // A column's ranks as "Combining=2 SB=1 ..." over the rows the paper fills.
  auto order = [](const std::vector<int>& ranks, std::size_t c) {
    std::string s;
    for (std::size_t r = 0; r < std::size(kTable2); ++r)
      if (kTable2[r].paper[c] >= 0) s += fmt::format("{}{}={}", s.empty() ? "" : " ", kTable2[r].paper_name, ranks[r]);
    return s;
  };
  for (std::size_t c = 0; c < 3; ++c) {
    std::vector<double> p;
    for (const auto& row : kTable2) p.push_back(row.paper[c]);
    const auto rp = ranks(p);
    rows.push_back({fmt::format("table2.order.{}", kColumns[c]), "Table 2: the column's order (1 = fastest)",
                    order(rp, c), [rp, c, order](const SwitchFigures& f) -> std::optional<Outcome> {
                      std::vector<double> o;
                      for (const auto& row : f.table2) o.push_back(row[c]);
                      const auto ro = ranks(o);
                      return Outcome{order(ro, c), ro == rp};
                    }});
  }
  // The start-up: the paper states t_s = 5 us, charged on each send and each receive (LogP's o);
  // the preset's C_send (= C_recv).
  rows.push_back(
      {"sec3.3.startup",
       "Sec. 3.3 and Table 2: 't_s (communication startup time) = 5 microsecond', as o on each send and receive", "",
       [](const SwitchFigures& f) -> std::optional<Outcome> {
         return Outcome{"", false, f.send_us,
                        fmt::format("the preset's C_send (C_recv = {:g} us). Table 2's own single-switch LR, 31 "
                                    "sequential steps of 205.78/31 = 6.64 us, leaves 2.54 us beside the 256 flits' "
                                    "4.10 us, so Table 2 cannot have charged 5 us; section 5.3's runs use 5 us "
                                    "(docs/paper004.md)",
                                    f.recv_us)};
       },
       kTol, 5.0, "us"});
  rows.push_back(
      {"sec3.2.sb-before-ring",
       "Sec. 3.2: 'the SB algorithm will always complete in less time than the ring algorithm on a single switch'",
       "SB < LR on switch:32", [](const SwitchFigures& f) -> std::optional<Outcome> {
         return Outcome{fmt::format("SB {:.2f}, LR {:.2f} us", f.sb_us, f.lr_us), f.sb_us < f.lr_us};
       }});
  // Section 3.3, Figure 6 (5 us start-up): combining best at 128 flits except for very small P, SB
  // best at 1024 flits; on the preset and on the preset with a 5 us start-up.
  for (int i = 0; i < 2; ++i) {
    const std::string tag = i == 0 ? "preset" : "5us";
    const std::string note = i == 0 ? "the preset's start-up (C_send = C_recv = 1 us)"
                                    : "the preset with the paper's 5 us start-up (send_us=5,recv_us=5)";
    rows.push_back(
        {"fig6.128-flits.combining." + tag,
         "Sec. 3.3, Fig. 6: 'In the case of the 128 flit messages, the combining algorithm performs best except "
         "for very small numbers of nodes'",
         "combining < SB for P = 8, 16, 32", [i, note](const SwitchFigures& f) -> std::optional<Outcome> {
           const auto& bad = f.not_combining_128[i];
           return Outcome{"P where not: " + list(bad), bad.empty(), 0, note};
         }});
    rows.push_back({"fig6.1024-flits.sb." + tag,
                    "Sec. 3.3, Fig. 6: 'In the case of 1024 flit messages, however, the SB algorithm outperforms the "
                    "combining algorithm'",
                    "SB < combining for P = 8, 16, 32", [i, note](const SwitchFigures& f) -> std::optional<Outcome> {
                      const auto& bad = f.not_sb_1024[i];
                      return Outcome{"P where not: " + list(bad), bad.empty(), 0, note};
                    }});
  }
  for (std::size_t i = 0; i < std::size(kCrossoverStartupsUs); ++i)
    rows.push_back(
        {fmt::format("sec3.3.crossover.{}us", kCrossoverStartupsUs[i]),
         "Sec. 3.3: 'For all startup times of 5, 10, 20, and 30 microseconds, this crossover was observed at "
         "some message size'",
         "combining best at 128 flits, SB best at some larger size (P = 32)",
         [i](const SwitchFigures& f) -> std::optional<Outcome> {
           const std::size_t cross = f.crossover[i];
           return Outcome{f.combining_at_128[i]
                              ? (cross ? fmt::format("SB first best at {} flits", cross)
                                       : fmt::format("SB never best up to {} flits", kLargestCrossoverFlits))
                              : "SB already best at 128 flits",
                          f.combining_at_128[i] && cross > 128};
         }});
  return rows;
}

// What the claims measure on section 5.3's generated networks, per network.
struct IrregularFigures {
  std::vector<double> gain;     // best other / LS
  std::vector<double> so_step;  // SO-ring / 127 over Table 2's single-switch step
  int ro_worse = 0;             // networks where RO-ring is slower than SO-ring and LS
  double mean(const std::vector<double>& v) const {
    double m = 0;
    for (double x : v) m += x / static_cast<double>(v.size());
    return m;
  }
};

IrregularFigures irregular_figures(const std::string& arbitration, int networks, const Additions& add) {
  IrregularFigures f;
  for (const auto& n : irregular_runs(arbitration, networks, add)) {
    double best_other = INFINITY;
    for (const auto& [a, t] : n.us)
      if (a != "allgather/LS") best_other = std::min(best_other, t);
    f.gain.push_back(best_other / n.us.at("allgather/LS"));
    f.so_step.push_back(n.us.at("allgather/SO-ring") / 127.0 / kTable2RingStepUs);
    f.ro_worse += n.us.at("allgather/RO-ring") > n.us.at("allgather/SO-ring") &&
                  n.us.at("allgather/RO-ring") > n.us.at("allgather/LS");
  }
  return f;
}

// Section 5.3's statements on `networks` generated 128-node networks.
std::vector<ClaimRow<IrregularFigures>> irregular_claims(int networks) {
  return {
      {"sec5.3.ls-gain",
       fmt::format("Abstract, Sec. 5.3: LS shows 'a 27.1% improvement in performance compared to other available "
                   "algorithms' (best other / LS, mean over {} networks)",
                   networks),
       "",
       [](const IrregularFigures& f) -> std::optional<Outcome> {
         return Outcome{"", false, f.mean(f.gain), "per network: " + distribution(f.gain, "{:.2f}")};
       },
       kTol, 1 / (1 - 0.271)},
      {"sec5.3.so-ring-step",
       fmt::format("Table 3 (its values withheld, only this ratio given): the SO-ring step (SO-ring / 127) about 2.2x "
                   "Table 2's single-switch step 205.78/31 us (mean over {} networks)",
                   networks),
       "",
       [](const IrregularFigures& f) -> std::optional<Outcome> {
         return Outcome{"", false, f.mean(f.so_step), "per network: " + distribution(f.so_step, "{:.2f}")};
       },
       kTol, 2.2},
      {"sec5.ro-ring-less-attractive",
       "Sec. 5: 'The rank ordering ring (RO-R) algorithm, the default implementation supplied by MPICH, becomes less "
       "attractive as the potential for link contention increases'",
       "RO-ring slower than SO-ring and LS",
       [networks](const IrregularFigures& f) -> std::optional<Outcome> {
         return Outcome{fmt::format("on {} of {} networks", f.ro_worse, networks), f.ro_worse == networks};
       }},
  };
}

struct ClaimsSettings {
  std::string arbitration;
  int seeds = 100, networks = 20;
};

// The claims on the machines as `add` leaves them; only the switch presets' claims, or only
// section 5.3's, when a variant touches the one family and not the other.
claims::Ledger claims_on(const ClaimsSettings& cs, const Additions& add, bool switches, bool irregular) {
  claims::Ledger L;
  if (switches) bench::add_rows(L, switch_claims(), switch_figures(cs.arbitration, cs.seeds, add));
  if (irregular) bench::add_rows(L, irregular_claims(cs.networks), irregular_figures(cs.arbitration, cs.networks, add));
  return L;
}

// The claims, each measured again at the ends of the ranges the switch presets' and the irregular
// networks' calibrations leave open (touchstone::open_variants) unless `preset_only`: a claim that
// flips there is undecided. The stated 5 us start-up, which Table 2 contradicts, is measured too and
// named beside each claim it would flip (bench::weigh).
int print_claims(const ClaimsSettings& cs, const std::string& options, bool preset_only, claims::Format format) {
  const Additions preset{options, ""};
  claims::Ledger L = claims_on(cs, preset, true, true);
  const MachineSpec switches = MachineSpec::parse("switch:32"), networks = irregular_machine(1, cs.arbitration);
  std::vector<std::string> open, contradicted;
  if (!preset_only)
    for (const auto& family : {switches, networks})
      for (const auto& v : open_variants(family)) {
        auto& list = v.contradicted ? contradicted : open;
        if (std::find(list.begin(), list.end(), v.options) != list.end()) continue;
        list.push_back(v.options);
        const Additions variant{preset.user, v.options};
        const bool on_switches = variant(switches) != preset(switches);
        const bool on_networks = variant(networks) != preset(networks);
        bench::weigh(L, claims_on(cs, variant, on_switches, on_networks), v);
      }
  if (format == claims::Format::text)
    fmt::print(
        "Paper 004 claims (arbitration {}, machine options '{}', Table 2 means over run seeds 1..{}, {} irregular "
        "networks; numbers within {:.2f}x count as reproduced{}{})\n\n",
        cs.arbitration, options, cs.seeds, cs.networks, kTol,
        open.empty() ? "" : fmt::format("; {} open variants", open.size()),
        contradicted.empty() ? ""
                             : fmt::format("; noted, not deciding: the stated {}, which Table 2 contradicts",
                                           fmt::join(contradicted, " and ")));
  L.print(stdout, format);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Paper 004 reproductions: all-to-all broadcast on switch-based clusters"};
  app.require_subcommand(1);
  app.add_option("--jobs", g_parallel, "emulations at once (0: the host's cores)")->check(CLI::Range(0, 1024));
  app.fallthrough();  // --jobs also after the subcommand
  std::string placement = "cyclic";  // docs/paper004.md: the placement that fits Table 2 best
  std::string arbitration = "random";  // the switch machines' own (docs/model.md 2.13)
  // Table 2's run seeds: under random arbitration balanced combining spreads over 209..418 us from
  // seed to seed, and its mean over seeds 1..10 (312 us) lay 6% above the one that 50, 100 and 200
  // seeds agree on (294 to 296 us).
  int run_seeds = 100;
  int seeds = 10;       // irregular: networks 1..N
  std::string options;  // machine options added to every machine (irregular, claims)
  auto* t2 = app.add_subcommand("table2", "Table 2 beside the paper's");
  t2->add_option("--placement", placement, "ranks on the 2-switch networks: block, cyclic or random")->check(CLI::IsMember({"block", "cyclic", "random"}));
  const auto arbitrations = CLI::IsMember({"fifo", "random", "round-robin"});
  t2->add_option("--arbitration", arbitration, "switch output arbitration: fifo, random or round-robin")->check(arbitrations);
  t2->add_option("--seeds", run_seeds, "run seeds 1..N (arbitration draws, random placement)")
      ->check(CLI::Range(1, 1000));
  auto* pb = app.add_subcommand("placements", "lower bounds of RO-ring and combining over every 2-switch rank placement");
  auto* ir = app.add_subcommand("irregular", "128-node, 10-switch irregular networks (section 5.3)");
  ir->add_option("--arbitration", arbitration, "switch output arbitration: fifo, random or round-robin")->check(arbitrations);
  ir->add_option("--seeds", seeds, "networks 1..N (network, placement and run seed)")->check(CLI::Range(1, 1000));
  ir->add_option("--options", options,
                 "machine options appended to every machine, e.g. ',send_us=1,recv_us=1' (the preset's start-up)");
  auto* cl = app.add_subcommand("claims", "Table 2, section 3's crossovers and section 5.3's statements beside ours, with verdicts");
  std::string format = "text";
  int networks = 20;
  cl->add_option("--format", format, "text, csv or markdown")->check(CLI::IsMember({"text", "csv", "markdown"}));
  cl->add_option("--arbitration", arbitration, "switch output arbitration: fifo, random or round-robin")->check(arbitrations);
  cl->add_option("--seeds", run_seeds, "Table 2: run seeds 1..N")->check(CLI::Range(1, 1000));
  cl->add_option("--networks", networks, "section 5.3: generated 128-node networks 1..N")->check(CLI::Range(1, 1000));
  cl->add_option("--options", options, "machine options appended to every machine, e.g. ',send_us=2.5,recv_us=2.5'");
  bool preset_only = false;
  cl->add_flag("--preset-only", preset_only, "do not measure the open variants (no claim is then undecided)");
  if (const auto code = touchstone::cli::parse_command_line(app, argc, argv)) return *code;
  try {
    if (*cl)
      return print_claims({arbitration, run_seeds, networks}, options, preset_only, claims::parse_format(format));
    if (*t2) return table2(placement, arbitration, run_seeds);
    if (*pb) return placements();
    return irregular(arbitration, seeds, options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
