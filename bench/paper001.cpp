// Paper 001 (Ben Miled, Fortes, Eigenmann, Taylor, "On the Implementation of Broadcast, Scatter and
// Gather in a Heterogeneous Architecture"): the optimal initial sub-mesh search of sections 3.1
// and 4.1 on two-level HPAM machines with one level-1 processor, by emulation and by the paper's
// models (eqs. 5, 6, 10, 11), and the paper's claims checked.
//
//   paper001 search [--levels 4x4,8x8,16x16,64x64] [--q 2,8,32] [--sizes 0,256,1024,4096]
//                   [--csv FILE]
//   paper001 multi | scatter42 [--csv FILE] | both42 [--csv FILE]     (sections 3.2 and 4.2)
//   paper001 plot SMALL.csv SEARCH.csv OUTDIR [FIG9.csv FIG10.csv]     (the figures, through the
//                                                                      harness's plotting path)
//
// For every second level r2 x c2, Q and message size S: every p2 x q2 (powers of two) for the
// hybrid broadcast (bcast/hybrid) and scatter (scatter/hybrid), emulated and by eqs. 5 and 10;
// every p2 x 1 for the multicast variants (bcast/multicast, scatter/multicast), emulated on the
// same machine with its inter-level multicast hardware (hpam:1x1/R2xC2,Q=q,multicast; the
// hardware does not change what the hybrid algorithms cost) and by eqs. 6 and 11. The CSV holds
// one row per point, for tools/plot_paper001.py.
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/hpam_model.hpp"
#include "algorithms/registry.hpp"
#include "tools/experiment/claims.hpp"
#include "tools/experiment/experiment.hpp"
#include "tools/parse_command_line.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using namespace touchstone;
using algorithms::HpamModel;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == ',') out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// The emulation options of every point: sizes only (the timing is identical, docs/model.md 1.5),
// and small stacks, since the algorithms keep little on them and 4097 VPs start faster.
RunOptions point_options() {
  RunOptions o;
  o.phantom_payloads = true;
  o.stack_bytes = std::size_t{64} << 10;
  return o;
}

Time emulate(const Machine& m, const std::string& algorithm, std::size_t size) {
  return experiment::emulate(m, algorithms::find(algorithm), algorithms::Args{size, 0, false}, point_options())
      .result.makespan;
}

struct Best {
  int p = 0, q = 0;
  Time t = std::numeric_limits<Time>::max();
  void offer(int pp, int qq, Time tt) {
    if (tt < t) p = pp, q = qq, t = tt;
  }
  std::string str() const { return fmt::format("{}x{}", p, q); }
};

// The paper's claims as the search checks them: a statement per (machine, size), a line for each
// that does not hold, and the count at the end (the experiment harness's ledger keeps them).
struct SearchClaims {
  claims::Ledger ledger;
  void check(bool held, const std::string& what) {
    ledger.statement(fmt::format("search.{}", ledger.claims().size()), "paper 001, sections 3.1 and 4.1", what,
                     held ? "holds" : "does not hold", held);
    if (!held) fmt::print("    claim NOT reproduced: {}\n", what);
  }
};

// One machine hpam:1x1/LEVEL,Q=q,multicast at size s: every p2 x q2 of the hybrid broadcast and
// scatter and every p2 x 1 of the multicast ones, emulated in parallel by the experiment harness.
struct Emulated {
  std::map<std::pair<int, int>, std::pair<Time, Time>> hybrid;  // (p2, q2) -> (bcast, scatter)
  std::map<int, std::pair<Time, Time>> multicast;               // p2 -> (bcast, scatter)
};

Emulated emulate_points(const Machine& m, const HpamModel& h, std::size_t s, int jobs) {
  std::vector<std::string> names;
  for (int p = 1; p <= h.r2; p *= 2)
    for (int q = 1; q <= h.c2; q *= 2)
      for (const char* op : {"bcast", "scatter"}) names.push_back(fmt::format("{}/hybrid({}x{})", op, p, q));
  for (int p = 1; p <= h.r2; p *= 2)
    for (const char* op : {"bcast", "scatter"}) names.push_back(fmt::format("{}/multicast({}x1)", op, p));
  std::vector<experiment::Job> batch;
  for (const auto& n : names) batch.push_back({&m, &algorithms::find(n), algorithms::Args{s, 0, false}, point_options()});
  const auto out = experiment::run_jobs(batch, {.parallel = jobs});
  for (const auto& o : out)
    if (!o.record) throw std::runtime_error(fmt::format("{} on {}: {}", o.job->algorithm->name, m.name, o.error));
  Emulated e;
  std::size_t i = 0;
  for (int p = 1; p <= h.r2; p *= 2)
    for (int q = 1; q <= h.c2; q *= 2, i += 2)
      e.hybrid[{p, q}] = {out[i].record->result.makespan, out[i + 1].record->result.makespan};
  for (int p = 1; p <= h.r2; p *= 2, i += 2)
    e.multicast[p] = {out[i].record->result.makespan, out[i + 1].record->result.makespan};
  return e;
}

// The bests of one size, which the claims across sizes compare.
struct SizeBests {
  int scatter_area_model, scatter_area_emulated, mscatter_p_model, mscatter_p_emulated;
};

// One row of the search at size s: the best sub-meshes by the models (eqs. 5, 6, 10, 11) and
// emulated, the CSV points, and the claims of sections 3.1 and 4.1 that hold at one size.
SizeBests search_size(const std::string& level, const std::string& qtext, const HpamModel& h, std::size_t s,
                      const Emulated& e, std::FILE* csv, SearchClaims& claims) {
  Best bm, be, mm, me, sm, se, smm, sme;
  Time brute_model = 0, brute_emulated = 0, worst_model = 0, worst_emulated = 0;
  std::map<std::pair<int, int>, Time> scatter_model, bcast_emulated;
  for (const auto& [pq, times] : e.hybrid) {
    const auto [p, q] = pq;
    const Time b_model = h.eq5_hybrid_bcast(p, q, s), s_model = h.eq10_hybrid_scatter(p, q, s);
    const auto [b_emu, s_emu] = times;
    bm.offer(p, q, b_model), be.offer(p, q, b_emu), sm.offer(p, q, s_model), se.offer(p, q, s_emu);
    scatter_model[{p, q}] = s_model;
    bcast_emulated[{p, q}] = b_emu;
    if (p == 1 && q == 1) brute_model = b_model, brute_emulated = b_emu;
    worst_model = std::max(worst_model, b_model), worst_emulated = std::max(worst_emulated, b_emu);
    if (csv) {
      std::fprintf(csv, "%s,%s,bcast-hybrid,%d,%d,%zu,%.4f,%.4f\n", level.c_str(), qtext.c_str(), p, q, s, to_us(b_model), to_us(b_emu));
      std::fprintf(csv, "%s,%s,scatter-hybrid,%d,%d,%zu,%.4f,%.4f\n", level.c_str(), qtext.c_str(), p, q, s, to_us(s_model), to_us(s_emu));
    }
  }
  for (const auto& [p, times] : e.multicast) {
    const Time bmc = h.eq6_multicast_bcast(p, s), smc = h.eq11_multicast_scatter(p, s);
    const auto [bmc_emu, smc_emu] = times;
    mm.offer(p, 1, bmc), smm.offer(p, 1, smc), me.offer(p, 1, bmc_emu), sme.offer(p, 1, smc_emu);
    if (csv) {
      std::fprintf(csv, "%s,%s,bcast-multicast,%d,1,%zu,%.4f,%.4f\n", level.c_str(), qtext.c_str(), p, s, to_us(bmc), to_us(bmc_emu));
      std::fprintf(csv, "%s,%s,scatter-multicast,%d,1,%zu,%.4f,%.4f\n", level.c_str(), qtext.c_str(), p, s, to_us(smc),
                   to_us(smc_emu));
    }
  }
  const double gain = 100.0 * static_cast<double>(bm.t - mm.t) / static_cast<double>(bm.t);
  const double gain_emu = 100.0 * static_cast<double>(be.t - me.t) / static_cast<double>(be.t);
  fmt::print("{:>6} | {:>7} {:>14.2f} {:>7} {:>14.2f} | {:>5} {:>8.2f} {:>6.1f} {:>5} {:>8.2f} {:>6.1f} | {:>7} {:>14.2f} {:>7} "
             "{:>14.2f} | {:>5} {:>8.2f} {:>5} {:>8.2f}\n",
             s, bm.str(), to_us(bm.t), be.str(), to_us(be.t), mm.str(), to_us(mm.t), gain, me.str(), to_us(me.t), gain_emu,
             sm.str(), to_us(sm.t), se.str(), to_us(se.t), smm.str(), to_us(smm.t), sme.str(), to_us(sme.t));
  // Section 3.1: "the optimal partitioning consists of two sub-meshes constructed along the
  // columns (r2 x c2/2) regardless of the size of the mesh, the size of the message or Q".
  claims.check(bm.p == h.r2 && bm.q == h.c2 / 2, fmt::format("eq. 5 best {} is not {}x{}", bm.str(), h.r2, h.c2 / 2));
  claims.check(be.p == h.r2 && be.q == h.c2 / 2, fmt::format("emulated hybrid broadcast best {} is not {}x{}", be.str(), h.r2, h.c2 / 2));
  // "In all the tests conducted, the brute force approach results in worst case performance."
  claims.check(brute_model == worst_model, "eq. 5: brute force is not the slowest broadcast");
  claims.check(brute_emulated == worst_emulated, "emulated: brute force is not the slowest broadcast");
  // "the optimal sub-mesh size is r2/2 x 1" (multicast, eq. 6).
  claims.check(mm.p == h.r2 / 2, fmt::format("eq. 6 best {} is not {}x1", mm.str(), h.r2 / 2));
  claims.check(me.p == h.r2 / 2, fmt::format("emulated multicast broadcast best {} is not {}x1", me.str(), h.r2 / 2));
  // "more than 43%" for 4x4, "more than 46%" for 16x16 and larger.
  const double want = h.r2 * h.c2 <= 16 ? 43 : h.r2 * h.c2 >= 256 ? 46 : 0;
  claims.check(gain > want, fmt::format("multicast gain {:.1f}% is not above {}%", gain, want));
  claims.check(gain_emu > want, fmt::format("emulated multicast gain {:.1f}% (best hybrid {} against best multicast {}) is not above {}%",
                                            gain_emu, be.str(), me.str(), want));
  // Sections 3.1, 4.1: column partitions (tall sub-meshes) beat row partitions of the same size.
  for (int p = 2; p <= h.r2; p *= 2)
    for (int q = 1; q < p && q <= h.c2; q *= 2) {
      if (p > h.c2) continue;
      claims.check(scatter_model[{p, q}] <= scatter_model[{q, p}],
                   fmt::format("eq. 10: {}x{} (column partition) is slower than {}x{}", p, q, q, p));
      claims.check(bcast_emulated[{p, q}] <= bcast_emulated[{q, p}],
                   fmt::format("emulated broadcast: {}x{} (column partition) is slower than {}x{}", p, q, q, p));
    }
  return {sm.p * sm.q, se.p * se.q, smm.p, sme.p};
}

int search(const std::string& levels, const std::string& qs, const std::string& sizes, const std::string& csv_path, int jobs) {
  std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (!csv_path.empty() && !csv) throw UsageError(fmt::format("cannot write '{}'", csv_path));
  if (csv) std::fprintf(csv, "level2,Q,op,p2,q2,size,model_us,emulated_us\n");
  SearchClaims claims;
  for (const auto& level : split(levels)) {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& qtext : split(qs)) {
      const Machine m = parse_machine(fmt::format("hpam:1x1/{},Q={},multicast", level, qtext));
      const HpamModel h = HpamModel::of(m);
      fmt::print("\n== hpam:1x1/{}, Q = {} ==\n", level, qtext);
      fmt::print("{:>6} | {:>22} {:>22} | {:>14} {:>6} {:>14} {:>6} | {:>22} {:>22} | {:>14} {:>14}\n", "S", "bcast best: model",
                 "emulated", "mcast model", "gain%", "mcast emulated", "gain%", "scatter best: model", "emulated", "mcast model",
                 "mcast emulated");
      std::vector<SizeBests> bests;
      for (const auto& stext : split(sizes)) {
        const std::size_t s = std::stoull(stext);
        bests.push_back(search_size(level, qtext, h, s, emulate_points(m, h, s, jobs), csv, claims));
      }
      // Section 4.1: "large sub-meshes should be used with small messages and small sub-meshes
      // with large messages" (the best p2 * q2 never grows with S); with the multicast (Figure 7)
      // "the size of the optimal sub-mesh increases as the message size decreases".
      for (std::size_t i = 1; i < bests.size(); ++i) {
        claims.check(bests[i].scatter_area_model <= bests[i - 1].scatter_area_model, "eq. 10: the best scatter sub-mesh grows with S");
        claims.check(bests[i].scatter_area_emulated <= bests[i - 1].scatter_area_emulated, "emulated: the best scatter sub-mesh grows with S");
        claims.check(bests[i].mscatter_p_model <= bests[i - 1].mscatter_p_model, "eq. 11: the best multicast scatter sub-mesh grows with S");
        claims.check(bests[i].mscatter_p_emulated <= bests[i - 1].mscatter_p_emulated, "emulated: the best multicast scatter sub-mesh grows with S");
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("(level 2 = {}: {:.1f} s of host time)\n", level, secs);
  }
  if (csv) std::fclose(csv);
  const int held = claims.ledger.count(claims::Verdict::reproduced);
  fmt::print("\nclaims held: {} of {}\n", held, static_cast<int>(claims.ledger.claims().size()));
  return 0;
}

// The scenarios of sections 3.2 and 4.2: every level shape x Q x message size, on the machine with
// the multicast hardware (the hybrid algorithms run on it too: they never multicast).
template <class F>
void for_each_scenario(const std::string& machines, const std::string& qs, const std::string& sizes, F&& f) {
  for (const auto& levels : split(machines))
    for (const auto& q : split(qs))
      for (const auto& stext : split(sizes)) {
        const Machine m = parse_machine(fmt::format("hpam:{},Q={},multicast", levels, q));
        f(levels, q, static_cast<std::size_t>(std::stoull(stext)), m, HpamModel::of(m));
      }
}

// Section 3.2: several level-1 processors. Eq. 7 (hybrid, two r2 x c2/2 sub-meshes) and eq. 8
// (multicast, r2/2 x 1), each emulated and by the model; the paper: "more than 31%, 41% and 45%
// when Q = 2, 8, and 32" on 4x4 / 16x16, "38% to 46%" on 64x64.
int multi(const std::string& machines, const std::string& qs, const std::string& sizes) {
  fmt::print("{:>14} {:>4} {:>6} | {:>12} {:>12} | {:>12} {:>12} | {:>8} {:>8}\n", "levels", "Q", "S", "eq. 7", "emulated", "eq. 8",
             "emulated", "gain%", "emu gain%");
  for_each_scenario(machines, qs, sizes, [&](const std::string& levels, const std::string& q, std::size_t s,
                                           const Machine& m, const HpamModel& h) {
    const Time e7 = h.eq7_hybrid_bcast_multi(s, true), e8 = h.eq8_multicast_bcast_multi(s, true);
    const Time emu7 = emulate(m, fmt::format("bcast/hybrid({}x{})", h.r2, h.c2 / 2), s);
    const Time emu8 = emulate(m, fmt::format("bcast/multicast({}x1)", h.r2 / 2), s);
    fmt::print("{:>14} {:>4} {:>6} | {:>12.2f} {:>12.2f} | {:>12.2f} {:>12.2f} | {:>8.1f} {:>8.1f}\n", levels, q, s, to_us(e7),
               to_us(emu7), to_us(e8), to_us(emu8), 100.0 * static_cast<double>(e7 - e8) / static_cast<double>(e7),
               100.0 * static_cast<double>(emu7 - emu8) / static_cast<double>(emu7));
  });
  return 0;
}

// The CSV rows of section 4.2's subcommands, in `search`'s format (one row per point, the model
// column empty where the paper gives no equation), for tools/plot_paper001.py.
struct Csv {
  std::FILE* f = nullptr;
  explicit Csv(const std::string& path) {
    if (path.empty()) return;
    f = std::fopen(path.c_str(), "w");
    if (!f) throw UsageError(fmt::format("cannot write '{}'", path));
    std::fprintf(f, "level2,Q,op,p2,q2,size,model_us,emulated_us\n");
  }
  ~Csv() {
    if (f) std::fclose(f);
  }
  void row(const std::string& levels, const std::string& q, const char* op, int p2, int q2, std::size_t s, std::optional<Time> model,
           Time emulated) {
    if (!f) return;
    const std::string mo = model ? fmt::format("{:.4f}", to_us(*model)) : "";
    std::fprintf(f, "%s,%s,%s,%d,%d,%zu,%s,%.4f\n", levels.c_str(), q.c_str(), op, p2, q2, s, mo.c_str(), to_us(emulated));
  }
};

double gain(const Best& hybrid, const Best& multicast) {
  return 100.0 * static_cast<double>(hybrid.t - multicast.t) / static_cast<double>(hybrid.t);
}

// Section 4.2, destinations in level 2 only: every p2 x q2 by eqs. 12/13 and emulated
// (scatter/hybrid-level2); the paper: "the sub-mesh size of choice satisfies q2 <= f2", and the
// optimal height falls as S grows. With the multicast hardware (scatter/multicast-level2, every
// p2 x 1) by eq. 14 and emulated, and the gain of the best multicast over the best hybrid
// (Figure 9).
int scatter42(const std::string& machines, const std::string& qs, const std::string& sizes, const std::string& csv_path) {
  Csv csv(csv_path);
  fmt::print("{:>14} {:>4} {:>6} | {:>7} {:>12} {:>6} | {:>7} {:>12} {:>6} | {:>7} {:>12} {:>7} {:>12} | {:>6} {:>6}\n", "levels", "Q",
             "S", "model", "us", "q2<=f2", "emu", "us", "q2<=f2", "mc eq14", "us", "mc emu", "us", "gain%", "emu%");
  int held = 0, checked = 0;
  for_each_scenario(machines, qs, sizes, [&](const std::string& levels, const std::string& q, std::size_t s,
                                           const Machine& m, const HpamModel& h) {
    const int f2 = h.c2 / h.c1;
    Best bm, be, mm, me;
    for (int p = 1; p <= h.r2; p *= 2) {
      for (int qq = 1; qq <= h.c2; qq *= 2) {
        const Time model = h.eq12_13_hybrid_scatter_multi(p, qq, s);
        const Time emu = emulate(m, fmt::format("scatter/hybrid-level2({}x{})", p, qq), s);
        bm.offer(p, qq, model), be.offer(p, qq, emu);
        csv.row(levels, q, "scatter42-hybrid", p, qq, s, model, emu);
      }
      const Time model = h.eq14_multicast_scatter_multi(p, s);
      const Time emu = emulate(m, fmt::format("scatter/multicast-level2({}x1)", p), s);
      mm.offer(p, 1, model), me.offer(p, 1, emu);
      csv.row(levels, q, "scatter42-multicast", p, 1, s, model, emu);
    }
    checked += 2;
    held += (bm.q <= f2) + (be.q <= f2);
    fmt::print("{:>14} {:>4} {:>6} | {:>7} {:>12.2f} {:>6} | {:>7} {:>12.2f} {:>6} | {:>7} {:>12.2f} {:>7} {:>12.2f} | {:>6.1f} {:>6.1f}\n",
               levels, q, s, bm.str(), to_us(bm.t), bm.q <= f2 ? "yes" : "NO", be.str(), to_us(be.t), be.q <= f2 ? "yes" : "NO",
               mm.str(), to_us(mm.t), me.str(), to_us(me.t), gain(bm, mm), gain(be, me));
  });
  fmt::print("q2 <= f2 held: {} of {}\n", held, checked);
  return 0;
}

// Section 4.2, destinations in both levels with equal final sizes (Figure 10): every p2 x q2 with
// q2 <= f2 of scatter/hybrid-both and every p2 x 1 of scatter/multicast-both, emulated, and the
// gain of the best multicast over the best hybrid. The paper gives no equation for this case, so
// there is no model column: Figure 10's curves can only be compared in shape, with the paper's
// text ("benefits most ... when the size of the message is small"; "as the size of the processor
// mesh in the second level increases the percent gain ... decreases").
//
// With `qs`, also the second scenario (Q S bytes per level-1 processor, the -qs algorithms) and
// the paper's claim about it: "the size of the optimal sub-mesh is larger than that of the
// corresponding same size message case ... to the hybrid as well as the multicast based scatters".
int both42(const std::string& machines, const std::string& qs, const std::string& sizes, const std::string& csv_path, bool with_qs) {
  Csv csv(csv_path);
  fmt::print("{:>14} {:>4} {:>6} | {:>7} {:>12} | {:>7} {:>12} | {:>6}", "levels", "Q", "S", "hybrid", "us", "mc", "us", "emu%");
  if (with_qs) fmt::print(" | {:>9} {:>12} | {:>9} {:>12} | {:>6}", "hybrid-qs", "us", "mc-qs", "us", "emu%");
  fmt::print("\n");
  int larger = 0, equal = 0, smaller = 0;
  for_each_scenario(machines, qs, sizes, [&](const std::string& levels, const std::string& q, std::size_t s,
                                           const Machine& m, const HpamModel& h) {
    // The best hybrid (q2 <= f2) and the best multicast (q2 = 1) of one scenario.
    auto best_pair = [&](const char* suffix) {
      Best hy, mc;
      for (int p = 1; p <= h.r2; p *= 2) {
        for (int qq = 1; qq <= h.c2 / h.c1; qq *= 2) {
          const Time emu = emulate(m, fmt::format("scatter/hybrid-both{}({}x{})", suffix, p, qq), s);
          hy.offer(p, qq, emu);
          csv.row(levels, q, fmt::format("both{}-hybrid", suffix).c_str(), p, qq, s, std::nullopt, emu);
        }
        const Time emu = emulate(m, fmt::format("scatter/multicast-both{}({}x1)", suffix, p), s);
        mc.offer(p, 1, emu);
        csv.row(levels, q, fmt::format("both{}-multicast", suffix).c_str(), p, 1, s, std::nullopt, emu);
      }
      return std::pair{hy, mc};
    };
    const auto [hy, mc] = best_pair("");
    fmt::print("{:>14} {:>4} {:>6} | {:>7} {:>12.2f} | {:>7} {:>12.2f} | {:>6.1f}", levels, q, s, hy.str(), to_us(hy.t), mc.str(),
               to_us(mc.t), gain(hy, mc));
    if (with_qs) {
      const auto [hq, mq] = best_pair("-qs");
      fmt::print(" | {:>9} {:>12.2f} | {:>9} {:>12.2f} | {:>6.1f}", hq.str(), to_us(hq.t), mq.str(), to_us(mq.t), gain(hq, mq));
      for (const auto& [e, u] : {std::pair{hy, hq}, std::pair{mc, mq}}) {
        const int a = e.p * e.q, b = u.p * u.q;
        larger += b > a, equal += b == a, smaller += b < a;
      }
    }
    fmt::print("\n");
  });
  if (with_qs)
    fmt::print("optimal sub-mesh with Q S bytes in level 1 against equal sizes: larger {}, the same {}, smaller {}\n", larger, equal,
               smaller);
  return 0;
}

// --levels, --q and --sizes: the scenario grid of the section 3.2 and 4.2 subcommands.
void add_scenario_options(CLI::App* sub, std::string& levels, std::string& qs, std::string& sizes) {
  sub->add_option("--levels", levels, "HPAM levels, comma-separated")->capture_default_str();
  sub->add_option("--q", qs, "values of Q, comma-separated")->capture_default_str();
  sub->add_option("--sizes", sizes, "message sizes S in bytes, comma-separated")->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"paper 001: broadcast and scatter on two-level HPAM machines"};
  app.require_subcommand(1);
  std::string levels = "4x4,8x8,16x16,64x64", qs = "2,8,32", sizes = "0,256,1024,4096", csv;
  int jobs = 1;
  auto* s = app.add_subcommand("search", "optimal initial sub-mesh, emulated and by eqs. 5, 6, 10, 11");
  s->add_option("--levels", levels, "second-level meshes, comma-separated")->capture_default_str();
  s->add_option("--q", qs, "values of Q, comma-separated")->capture_default_str();
  s->add_option("--sizes", sizes, "message sizes S in bytes, comma-separated")->capture_default_str();
  s->add_option("--csv", csv, "write every point to this CSV file");
  s->add_option("--jobs", jobs, "emulations run at once")->capture_default_str();
  std::string machines = "4x4/16x16,4x4/64x64";
  auto* mu = app.add_subcommand("multi", "section 3.2: several level-1 processors, eqs. 7 and 8 emulated and modeled");
  add_scenario_options(mu, machines, qs, sizes);
  std::string machines42 = "2x2/8x8,4x4/16x16,4x4/64x64";
  auto* sc = app.add_subcommand("scatter42", "section 4.2: scatter to level 2 with several level-1 processors, eqs. 12/13/14 and emulated");
  add_scenario_options(sc, machines42, qs, sizes);
  sc->add_option("--csv", csv, "write every point to this CSV file (for tools/plot_paper001.py, Figure 9)");
  std::string qs_both = "8";
  auto* bo = app.add_subcommand("both42", "section 4.2: scatter to both levels, equal sizes, hybrid and multicast emulated (Figure 10)");
  add_scenario_options(bo, machines42, qs_both, sizes);
  bo->add_option("--csv", csv, "write every point to this CSV file (for tools/plot_paper001.py, Figure 10)");
  std::vector<std::string> plot_inputs;
  auto* pl = app.add_subcommand("plot", "draw Figures 5-10 from the CSV files of search, scatter42 and both42 (tools/plot_paper001.py)");
  pl->add_option("inputs", plot_inputs,
                 "SMALL.csv SEARCH.csv OUTDIR [FIG9.csv FIG10.csv]: search --csv on 4x4 and on the grid, the output folder, "
                 "then scatter42 --csv and both42 --csv")
      ->required()
      ->expected(3, 5);
  bool with_qs = false;
  bo->add_flag("--qs", with_qs, "also the scatter with Q S bytes per level-1 processor (scatter/*-both-qs)");
  if (const auto code = touchstone::cli::parse_command_line(app, argc, argv)) return *code;
  try {
    if (pl->parsed()) {
      if (plot_inputs.size() == 4) throw UsageError("plot: give FIG9.csv and FIG10.csv together, or neither");
      experiment::run_plot_script("plot_paper001.py", plot_inputs, "paper 001's figures");
      return 0;
    }
    if (mu->parsed()) return multi(machines, qs, sizes);
    if (sc->parsed()) return scatter42(machines42, qs, sizes, csv);
    if (bo->parsed()) return both42(machines42, qs_both, sizes, csv, with_qs);
    return search(levels, qs, sizes, csv, jobs);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
