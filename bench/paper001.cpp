// Paper 001 (Ben Miled, Fortes, Eigenmann, Taylor, "On the Implementation of Broadcast, Scatter and
// Gather in a Heterogeneous Architecture"): the optimal initial sub-mesh search of sections 3.1
// and 4.1 on two-level HPAM machines with one level-1 processor, by emulation and by the paper's
// models (eqs. 5, 6, 10, 11), and the paper's claims checked.
//
//   paper001 search [--levels 4x4,8x8,16x16,64x64] [--q 2,8,32] [--sizes 0,256,1024,4096]
//                   [--csv FILE]
//   paper001 multi | scatter42 [--csv FILE] | both42 [--csv FILE]     (sections 3.2 and 4.2)
//   paper001 claims [--format text|csv|markdown] [--jobs N]            every testable statement of
//                                                                      sections 3 and 4, one verdict
//                                                                      per statement and reading
//   paper001 plot SMALL.csv SEARCH.csv OUTDIR [FIG9.csv FIG10.csv]     (the figures, through the
//                                                                      harness's plotting path)
//
// For every second level r2 x c2, Q and message size S: every p2 x q2 (powers of two) for the
// hybrid broadcast (bcast/hybrid) and scatter (scatter/hybrid), emulated and by eqs. 5 and 10;
// every p2 x 1 for the multicast variants (bcast/multicast, scatter/multicast), emulated on the
// same machine with its inter-level multicast hardware (hpam:1x1/R2xC2,Q=q,multicast; the
// hardware does not change what the hybrid algorithms cost) and by eqs. 6 and 11. The CSV holds
// one row per point, for experiment/scripts/plot_paper001.py.
//
// Each section's computation (search_case, multi_case, scatter42_case, both42_case) returns its
// figures; its subcommand prints them, and `claims` aggregates the same figures into one ledger.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/hpam_model.hpp"
#include "algorithms/registry.hpp"
#include "claim_rows.hpp"
#include "cli/parse_command_line.hpp"
#include "touchstone/experiment/claims.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/number_text.hpp"
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

// A message size of --sizes: a whole number of bytes up to 1 GiB, as `touchstone sweep --sizes`.
std::size_t size_of(const std::string& text, const char* what = "--sizes") {
  constexpr std::size_t kMaxSize = std::size_t{1} << 30;
  if (const auto v = number_in_range<std::size_t>(text, 0, kMaxSize)) return *v;
  throw UsageError(fmt::format("{}: '{}' is not a whole number of bytes in 0..{}", what, text, kMaxSize));
}

// The emulation options of every point: sizes only (the timing is identical, docs/model.md 1.5),
// and small stacks, since the algorithms keep little on them and 4097 VPs start faster.
RunOptions point_options() {
  RunOptions o;
  o.phantom_payloads = true;
  o.stack_bytes = std::size_t{64} << 10;
  return o;
}

// The named algorithms emulated on one machine at size s by the experiment harness, `jobs` at
// once: their makespans, in the names' order.
std::vector<Time> emulate_all(const Machine& m, const std::vector<std::string>& names, std::size_t s, int jobs) {
  std::vector<experiment::Job> batch;
  for (const auto& n : names) batch.push_back({&m, &algorithms::find(n), algorithms::Args{s, 0, false}, point_options()});
  std::vector<Time> out;
  for (const auto& o : experiment::run_jobs(batch, {.parallel = jobs})) {
    if (!o.record) throw std::runtime_error(fmt::format("{} on {}: {}", o.job->algorithm->name, m.name, o.error));
    out.push_back(o.record->result.makespan);
  }
  return out;
}

struct Best {
  int p = 0, q = 0;
  Time t = std::numeric_limits<Time>::max();
  void offer(int pp, int qq, Time tt) {
    if (tt < t) p = pp, q = qq, t = tt;
  }
  std::string str() const { return fmt::format("{}x{}", p, q); }
};

// The percent gain of the best multicast over the best hybrid: 100 (hybrid - multicast) / hybrid,
// the paper's "percent difference" (section 3.1).
double gain(const Best& hybrid, const Best& multicast) {
  return 100.0 * static_cast<double>(hybrid.t - multicast.t) / static_cast<double>(hybrid.t);
}

// Every figure has two readings: the paper's model (its equations) and the emulation.
enum Reading { kModel = 0, kEmulated = 1 };
constexpr Reading kReadings[] = {kModel, kEmulated};
using Readings = std::array<Time, 2>;  // [model, emulated]

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

// The HPAM machine of `levels` ("4x4/16x16") with Q = q and, unless told otherwise, the inter-level
// multicast hardware: the hybrid algorithms run on it too, since they never multicast.
MachineSpec hpam(const std::string& levels, const std::string& q, bool multicast = true) {
  MachineSpec s{"hpam", levels, {{"Q", q}}};
  if (multicast) s.options.push_back({"multicast", std::nullopt});
  return s;
}

// --- sections 3.1 and 4.1: one level-1 processor ---

// One (level 2, Q, S) of the search on hpam:1x1/LEVEL,Q=q,multicast: every p2 x q2 of the hybrid
// broadcast and scatter and every p2 x 1 of the multicast ones, by the models (eqs. 5, 10, 6, 11)
// and emulated, and the best sub-mesh of each.
struct SearchCase {
  std::string level, q;
  std::size_t s = 0;
  HpamModel h;
  std::map<std::pair<int, int>, Readings> bcast, scatter;  // hybrid: (p2, q2) -> [model, emulated]
  std::map<int, Readings> mbcast, mscatter;                // multicast: p2 -> [model, emulated]
  Best best_bcast[2], best_scatter[2], best_mbcast[2], best_mscatter[2];
  Time brute[2] = {0, 0}, worst[2] = {0, 0};  // the brute force (1x1) and the slowest hybrid broadcast
  double bcast_gain(Reading r) const { return gain(best_bcast[r], best_mbcast[r]); }
  double scatter_gain(Reading r) const { return gain(best_scatter[r], best_mscatter[r]); }
};

SearchCase search_case(const Machine& m, const std::string& level, const std::string& qtext, const HpamModel& h, std::size_t s,
                       int jobs) {
  std::vector<std::string> names;
  for (int p = 1; p <= h.r2; p *= 2)
    for (int q = 1; q <= h.c2; q *= 2)
      for (const char* op : {"bcast", "scatter"}) names.push_back(fmt::format("{}/hybrid({}x{})", op, p, q));
  for (int p = 1; p <= h.r2; p *= 2)
    for (const char* op : {"bcast", "scatter"}) names.push_back(fmt::format("{}/multicast({}x1)", op, p));
  const auto t = emulate_all(m, names, s, jobs);
  SearchCase c{level, qtext, s, h, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  std::size_t i = 0;
  for (int p = 1; p <= h.r2; p *= 2)
    for (int q = 1; q <= h.c2; q *= 2, i += 2) {
      const Readings b{h.eq5_hybrid_bcast(p, q, s), t[i]}, sc{h.eq10_hybrid_scatter(p, q, s), t[i + 1]};
      c.bcast[{p, q}] = b, c.scatter[{p, q}] = sc;
      for (Reading r : kReadings) {
        c.best_bcast[r].offer(p, q, b[r]), c.best_scatter[r].offer(p, q, sc[r]);
        c.worst[r] = std::max(c.worst[r], b[r]);
        if (p == 1 && q == 1) c.brute[r] = b[r];
      }
    }
  for (int p = 1; p <= h.r2; p *= 2, i += 2) {
    const Readings b{h.eq6_multicast_bcast(p, s), t[i]}, sc{h.eq11_multicast_scatter(p, s), t[i + 1]};
    c.mbcast[p] = b, c.mscatter[p] = sc;
    for (Reading r : kReadings) c.best_mbcast[r].offer(p, 1, b[r]), c.best_mscatter[r].offer(p, 1, sc[r]);
  }
  return c;
}

// The statements of sections 3.1 and 4.1 about one case, shared by `search` (a check per case)
// and `claims` (a count per statement and reading).

// "the optimal partitioning consists of two sub-meshes constructed along the columns (r2 x c2/2)
// regardless of the size of the mesh, the size of the message or Q".
bool best_is_two_column_halves(const SearchCase& c, Reading r) {
  return c.best_bcast[r].p == c.h.r2 && c.best_bcast[r].q == c.h.c2 / 2;
}
// "In all the tests conducted, the brute force approach results in worst case performance."
bool brute_force_is_slowest(const SearchCase& c, Reading r) { return c.brute[r] == c.worst[r]; }
// "the optimal sub-mesh size is r2/2 x 1" (multicast, eq. 6).
bool multicast_best_is_half_column(const SearchCase& c, Reading r) { return c.best_mbcast[r].p == c.h.r2 / 2; }
// "more than 43%" for 4x4, "more than 46%" for 16x16 and larger (0 where the paper gives no figure).
double multicast_gain_floor(const HpamModel& h) { return h.r2 * h.c2 <= 16 ? 43 : h.r2 * h.c2 >= 256 ? 46 : 0; }
// Sections 3.1, 4.1: column partitions (tall sub-meshes, p x q with p > q) beat row partitions of
// the same size; f(p, q) for every such pair.
template <class F>
void for_each_column_pair(const HpamModel& h, F&& f) {
  for (int p = 2; p <= h.r2; p *= 2)
    for (int q = 1; q < p && q <= h.c2; q *= 2) {
      if (p > h.c2) continue;
      f(p, q);
    }
}
bool column_beats_row(const std::map<std::pair<int, int>, Readings>& t, Reading r, int p, int q) {
  return t.at({p, q})[r] <= t.at({q, p})[r];
}
// Section 4.1: "large sub-meshes should be used with small messages and small sub-meshes with
// large messages" (the best p2 * q2); with the multicast (Figure 7) "the size of the optimal
// sub-mesh increases as the message size decreases" (the best p2).
int scatter_area(const SearchCase& c, Reading r) { return c.best_scatter[r].p * c.best_scatter[r].q; }
int multicast_scatter_height(const SearchCase& c, Reading r) { return c.best_mscatter[r].p; }

void print_search_row(const SearchCase& c) {
  const Best &bm = c.best_bcast[kModel], &be = c.best_bcast[kEmulated], &mm = c.best_mbcast[kModel], &me = c.best_mbcast[kEmulated];
  const Best &sm = c.best_scatter[kModel], &se = c.best_scatter[kEmulated], &smm = c.best_mscatter[kModel],
             &sme = c.best_mscatter[kEmulated];
  fmt::print("{:>6} | {:>7} {:>14.2f} {:>7} {:>14.2f} | {:>5} {:>8.2f} {:>6.1f} {:>5} {:>8.2f} {:>6.1f} | {:>7} {:>14.2f} {:>7} "
             "{:>14.2f} | {:>5} {:>8.2f} {:>5} {:>8.2f}\n",
             c.s, bm.str(), to_us(bm.t), be.str(), to_us(be.t), mm.str(), to_us(mm.t), c.bcast_gain(kModel), me.str(), to_us(me.t),
             c.bcast_gain(kEmulated), sm.str(), to_us(sm.t), se.str(), to_us(se.t), smm.str(), to_us(smm.t), sme.str(), to_us(sme.t));
}

void write_search_csv(const SearchCase& c, std::FILE* csv) {
  const char *level = c.level.c_str(), *q = c.q.c_str();
  for (const auto& [pq, b] : c.bcast) {
    const auto [p, qq] = pq;
    const Readings& sc = c.scatter.at(pq);
    std::fprintf(csv, "%s,%s,bcast-hybrid,%d,%d,%zu,%.4f,%.4f\n", level, q, p, qq, c.s, to_us(b[kModel]), to_us(b[kEmulated]));
    std::fprintf(csv, "%s,%s,scatter-hybrid,%d,%d,%zu,%.4f,%.4f\n", level, q, p, qq, c.s, to_us(sc[kModel]), to_us(sc[kEmulated]));
  }
  for (const auto& [p, b] : c.mbcast) {
    const Readings& sc = c.mscatter.at(p);
    std::fprintf(csv, "%s,%s,bcast-multicast,%d,1,%zu,%.4f,%.4f\n", level, q, p, c.s, to_us(b[kModel]), to_us(b[kEmulated]));
    std::fprintf(csv, "%s,%s,scatter-multicast,%d,1,%zu,%.4f,%.4f\n", level, q, p, c.s, to_us(sc[kModel]), to_us(sc[kEmulated]));
  }
}

// The claims of sections 3.1 and 4.1 that hold at one size, as `search` checks them.
void check_search_case(const SearchCase& c, SearchClaims& claims) {
  const HpamModel& h = c.h;
  const Best &bm = c.best_bcast[kModel], &be = c.best_bcast[kEmulated], &mm = c.best_mbcast[kModel], &me = c.best_mbcast[kEmulated];
  claims.check(best_is_two_column_halves(c, kModel), fmt::format("eq. 5 best {} is not {}x{}", bm.str(), h.r2, h.c2 / 2));
  claims.check(best_is_two_column_halves(c, kEmulated),
               fmt::format("emulated hybrid broadcast best {} is not {}x{}", be.str(), h.r2, h.c2 / 2));
  claims.check(brute_force_is_slowest(c, kModel), "eq. 5: brute force is not the slowest broadcast");
  claims.check(brute_force_is_slowest(c, kEmulated), "emulated: brute force is not the slowest broadcast");
  claims.check(multicast_best_is_half_column(c, kModel), fmt::format("eq. 6 best {} is not {}x1", mm.str(), h.r2 / 2));
  claims.check(multicast_best_is_half_column(c, kEmulated), fmt::format("emulated multicast broadcast best {} is not {}x1", me.str(), h.r2 / 2));
  const double want = multicast_gain_floor(h), gain = c.bcast_gain(kModel), gain_emu = c.bcast_gain(kEmulated);
  claims.check(gain > want, fmt::format("multicast gain {:.1f}% is not above {}%", gain, want));
  claims.check(gain_emu > want, fmt::format("emulated multicast gain {:.1f}% (best hybrid {} against best multicast {}) is not above {}%",
                                            gain_emu, be.str(), me.str(), want));
  for_each_column_pair(h, [&](int p, int q) {
    claims.check(column_beats_row(c.scatter, kModel, p, q), fmt::format("eq. 10: {}x{} (column partition) is slower than {}x{}", p, q, q, p));
    claims.check(column_beats_row(c.bcast, kEmulated, p, q),
                 fmt::format("emulated broadcast: {}x{} (column partition) is slower than {}x{}", p, q, q, p));
  });
}

// One (level 2, Q) of the search, every size in order.
std::vector<SearchCase> search_series(const std::string& level, const std::string& qtext, const std::string& sizes, int jobs) {
  const Machine m = build_machine(hpam("1x1/" + level, qtext));
  const HpamModel h = HpamModel::of(m);
  std::vector<SearchCase> cases;
  for (const auto& stext : split(sizes)) cases.push_back(search_case(m, level, qtext, h, size_of(stext), jobs));
  return cases;
}

int search(const std::string& levels, const std::string& qs, const std::string& sizes, const std::string& csv_path, int jobs) {
  std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (!csv_path.empty() && !csv) throw UsageError(fmt::format("cannot write '{}'", csv_path));
  if (csv) std::fprintf(csv, "level2,Q,op,p2,q2,size,model_us,emulated_us\n");
  SearchClaims claims;
  for (const auto& level : split(levels)) {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& qtext : split(qs)) {
      const auto cases = search_series(level, qtext, sizes, jobs);
      fmt::print("\n== hpam:1x1/{}, Q = {} ==\n", level, qtext);
      fmt::print("{:>6} | {:>22} {:>22} | {:>14} {:>6} {:>14} {:>6} | {:>22} {:>22} | {:>14} {:>14}\n", "S", "bcast best: model",
                 "emulated", "mcast model", "gain%", "mcast emulated", "gain%", "scatter best: model", "emulated", "mcast model",
                 "mcast emulated");
      for (const auto& c : cases) {
        print_search_row(c);
        if (csv) write_search_csv(c, csv);
        check_search_case(c, claims);
      }
      // Section 4.1 across sizes: the best p2 * q2 never grows with S, nor the best multicast p2.
      for (std::size_t i = 1; i < cases.size(); ++i) {
        const SearchCase &now = cases[i], &before = cases[i - 1];
        claims.check(scatter_area(now, kModel) <= scatter_area(before, kModel), "eq. 10: the best scatter sub-mesh grows with S");
        claims.check(scatter_area(now, kEmulated) <= scatter_area(before, kEmulated), "emulated: the best scatter sub-mesh grows with S");
        claims.check(multicast_scatter_height(now, kModel) <= multicast_scatter_height(before, kModel),
                     "eq. 11: the best multicast scatter sub-mesh grows with S");
        claims.check(multicast_scatter_height(now, kEmulated) <= multicast_scatter_height(before, kEmulated),
                     "emulated: the best multicast scatter sub-mesh grows with S");
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

// --- sections 3.2 and 4.2: several level-1 processors ---

// The scenarios of sections 3.2 and 4.2: every level shape x Q x message size, on the machine with
// the multicast hardware (the hybrid algorithms run on it too: they never multicast).
template <class F>
void for_each_scenario(const std::string& machines, const std::string& qs, const std::string& sizes, F&& f) {
  for (const auto& levels : split(machines))
    for (const auto& q : split(qs))
      for (const auto& stext : split(sizes)) {
        const Machine m = build_machine(hpam(levels, q));
        f(levels, q, size_of(stext), m, HpamModel::of(m));
      }
}

// Section 3.2: several level-1 processors. Eq. 7 (hybrid, two r2 x c2/2 sub-meshes) and eq. 8
// (multicast, r2/2 x 1), each emulated and by the model; the paper: "more than 31%, 41% and 45%
// when Q = 2, 8, and 32" on 4x4 / 16x16, "38% to 46%" on 64x64.
struct MultiCase {
  std::string levels, q;
  std::size_t s = 0;
  HpamModel h;
  Readings hybrid, multicast;  // eq. 7 and its algorithm emulated; eq. 8 and its algorithm emulated
  double gain(Reading r) const {
    return 100.0 * static_cast<double>(hybrid[r] - multicast[r]) / static_cast<double>(hybrid[r]);
  }
};

MultiCase multi_case(const std::string& levels, const std::string& q, std::size_t s, const Machine& m, const HpamModel& h, int jobs) {
  const auto t = emulate_all(
      m, {fmt::format("bcast/hybrid({}x{})", h.r2, h.c2 / 2), fmt::format("bcast/multicast({}x1)", h.r2 / 2)}, s, jobs);
  return {levels, q, s, h, {h.eq7_hybrid_bcast_multi(s, true), t[0]}, {h.eq8_multicast_bcast_multi(s, true), t[1]}};
}

std::vector<MultiCase> multi_cases(const std::string& machines, const std::string& qs, const std::string& sizes, int jobs) {
  std::vector<MultiCase> out;
  for_each_scenario(machines, qs, sizes, [&](const std::string& levels, const std::string& q, std::size_t s, const Machine& m,
                                           const HpamModel& h) { out.push_back(multi_case(levels, q, s, m, h, jobs)); });
  return out;
}

int multi(const std::string& machines, const std::string& qs, const std::string& sizes) {
  fmt::print("{:>14} {:>4} {:>6} | {:>12} {:>12} | {:>12} {:>12} | {:>8} {:>8}\n", "levels", "Q", "S", "eq. 7", "emulated", "eq. 8",
             "emulated", "gain%", "emu gain%");
  for (const auto& c : multi_cases(machines, qs, sizes, 1))
    fmt::print("{:>14} {:>4} {:>6} | {:>12.2f} {:>12.2f} | {:>12.2f} {:>12.2f} | {:>8.1f} {:>8.1f}\n", c.levels, c.q, c.s,
               to_us(c.hybrid[kModel]), to_us(c.hybrid[kEmulated]), to_us(c.multicast[kModel]), to_us(c.multicast[kEmulated]),
               c.gain(kModel), c.gain(kEmulated));
  return 0;
}

// One point of section 4.2 for the CSV: the model empty where the paper gives no equation.
struct Point42 {
  std::string op;
  int p2 = 0, q2 = 0;
  std::optional<Time> model;
  Time emulated = 0;
};

// The CSV rows of section 4.2's subcommands, in `search`'s format (one row per point, the model
// column empty where the paper gives no equation), for experiment/scripts/plot_paper001.py.
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
  void rows(const std::string& levels, const std::string& q, std::size_t s, const std::vector<Point42>& points) {
    if (!f) return;
    for (const auto& pt : points) {
      const std::string mo = pt.model ? fmt::format("{:.4f}", to_us(*pt.model)) : "";
      std::fprintf(f, "%s,%s,%s,%d,%d,%zu,%s,%.4f\n", levels.c_str(), q.c_str(), pt.op.c_str(), pt.p2, pt.q2, s, mo.c_str(),
                   to_us(pt.emulated));
    }
  }
};

// Section 4.2, destinations in level 2 only: every p2 x q2 by eqs. 12/13 and emulated
// (scatter/hybrid-level2); the paper: "the sub-mesh size of choice satisfies q2 <= f2", and the
// optimal height falls as S grows. With the multicast hardware (scatter/multicast-level2, every
// p2 x 1) by eq. 14 and emulated, and the gain of the best multicast over the best hybrid
// (Figure 9).
struct Scatter42Case {
  std::string levels, q;
  std::size_t s = 0;
  HpamModel h;
  Best hybrid[2], multicast[2];
  std::vector<Point42> points;
  double gain(Reading r) const { return ::gain(hybrid[r], multicast[r]); }
  // "the sub-mesh size of choice satisfies q2 <= f2" (f2 = c2 / c1).
  bool within_f2(Reading r) const { return hybrid[r].q <= h.c2 / h.c1; }
};

Scatter42Case scatter42_case(const std::string& levels, const std::string& q, std::size_t s, const Machine& m, const HpamModel& h,
                             int jobs) {
  std::vector<std::string> names;
  for (int p = 1; p <= h.r2; p *= 2) {
    for (int qq = 1; qq <= h.c2; qq *= 2) names.push_back(fmt::format("scatter/hybrid-level2({}x{})", p, qq));
    names.push_back(fmt::format("scatter/multicast-level2({}x1)", p));
  }
  const auto t = emulate_all(m, names, s, jobs);
  Scatter42Case c{levels, q, s, h, {}, {}, {}};
  std::size_t i = 0;
  for (int p = 1; p <= h.r2; p *= 2) {
    for (int qq = 1; qq <= h.c2; qq *= 2, ++i) {
      const Readings v{h.eq12_13_hybrid_scatter_multi(p, qq, s), t[i]};
      for (Reading r : kReadings) c.hybrid[r].offer(p, qq, v[r]);
      c.points.push_back({"scatter42-hybrid", p, qq, v[kModel], v[kEmulated]});
    }
    const Readings v{h.eq14_multicast_scatter_multi(p, s), t[i++]};
    for (Reading r : kReadings) c.multicast[r].offer(p, 1, v[r]);
    c.points.push_back({"scatter42-multicast", p, 1, v[kModel], v[kEmulated]});
  }
  return c;
}

std::vector<Scatter42Case> scatter42_cases(const std::string& machines, const std::string& qs, const std::string& sizes, int jobs) {
  std::vector<Scatter42Case> out;
  for_each_scenario(machines, qs, sizes, [&](const std::string& levels, const std::string& q, std::size_t s, const Machine& m,
                                           const HpamModel& h) { out.push_back(scatter42_case(levels, q, s, m, h, jobs)); });
  return out;
}

int scatter42(const std::string& machines, const std::string& qs, const std::string& sizes, const std::string& csv_path) {
  Csv csv(csv_path);
  fmt::print("{:>14} {:>4} {:>6} | {:>7} {:>12} {:>6} | {:>7} {:>12} {:>6} | {:>7} {:>12} {:>7} {:>12} | {:>6} {:>6}\n", "levels", "Q",
             "S", "model", "us", "q2<=f2", "emu", "us", "q2<=f2", "mc eq14", "us", "mc emu", "us", "gain%", "emu%");
  int held = 0, checked = 0;
  for (const auto& c : scatter42_cases(machines, qs, sizes, 1)) {
    csv.rows(c.levels, c.q, c.s, c.points);
    const Best &bm = c.hybrid[kModel], &be = c.hybrid[kEmulated], &mm = c.multicast[kModel], &me = c.multicast[kEmulated];
    checked += 2;
    held += c.within_f2(kModel) + c.within_f2(kEmulated);
    fmt::print("{:>14} {:>4} {:>6} | {:>7} {:>12.2f} {:>6} | {:>7} {:>12.2f} {:>6} | {:>7} {:>12.2f} {:>7} {:>12.2f} | {:>6.1f} {:>6.1f}\n",
               c.levels, c.q, c.s, bm.str(), to_us(bm.t), c.within_f2(kModel) ? "yes" : "NO", be.str(), to_us(be.t),
               c.within_f2(kEmulated) ? "yes" : "NO", mm.str(), to_us(mm.t), me.str(), to_us(me.t), c.gain(kModel), c.gain(kEmulated));
  }
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
// With `with_qs`, also the second scenario (Q S bytes per level-1 processor, the -qs algorithms)
// and the paper's claim about it: "the size of the optimal sub-mesh is larger than that of the
// corresponding same size message case ... to the hybrid as well as the multicast based scatters".
//
// Beside the emulation, HpamModel::both_levels_scatter: the paper's cost terms summed along the steps
// its text gives (ours; the paper prints no equation), to tell the algorithm's own behaviour from
// the emulated machine's.
struct Both42Case {
  std::string levels, q;
  std::size_t s = 0;
  HpamModel h;
  Best hybrid, multicast;                            // equal sizes, emulated
  std::optional<Best> hybrid_qs, multicast_qs;       // Q S bytes in level 1, emulated
  Best hybrid_model, multicast_model;                // equal sizes, by both_levels_scatter
  std::optional<Best> hybrid_qs_model, multicast_qs_model;
  std::vector<Point42> points;
};

// The optimal sub-mesh with Q S bytes in level 1 against equal sizes: +1 larger (p2 q2), 0 the
// same, -1 smaller.
int optimum_change(const Best& equal_sizes, const Best& qs) {
  const int a = equal_sizes.p * equal_sizes.q, b = qs.p * qs.q;
  return (b > a) - (b < a);
}

Both42Case both42_case(const std::string& levels, const std::string& q, std::size_t s, const Machine& m, const HpamModel& h, bool with_qs,
                       int jobs) {
  std::vector<std::string> suffixes{""};
  if (with_qs) suffixes.emplace_back("-qs");
  std::vector<std::string> names;
  for (const auto& suffix : suffixes)
    for (int p = 1; p <= h.r2; p *= 2) {
      for (int qq = 1; qq <= h.c2 / h.c1; qq *= 2) names.push_back(fmt::format("scatter/hybrid-both{}({}x{})", suffix, p, qq));
      names.push_back(fmt::format("scatter/multicast-both{}({}x1)", suffix, p));
    }
  const auto t = emulate_all(m, names, s, jobs);
  Both42Case c{levels, q, s, h, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  std::size_t i = 0;
  for (const auto& suffix : suffixes) {
    // The best hybrid (q2 <= f2) and the best multicast (q2 = 1) of one scenario, emulated and modeled.
    const std::size_t s1 = suffix.empty() ? s : s * static_cast<std::size_t>(h.q_ratio());
    Best hy, mc, hy_model, mc_model;
    for (int p = 1; p <= h.r2; p *= 2) {
      for (int qq = 1; qq <= h.c2 / h.c1; qq *= 2, ++i) {
        const Time model = h.both_levels_scatter(p, qq, false, s, s1);
        hy.offer(p, qq, t[i]);
        hy_model.offer(p, qq, model);
        c.points.push_back({fmt::format("both{}-hybrid", suffix), p, qq, model, t[i]});
      }
      const Time model = h.both_levels_scatter(p, 1, true, s, s1);
      mc.offer(p, 1, t[i]);
      mc_model.offer(p, 1, model);
      c.points.push_back({fmt::format("both{}-multicast", suffix), p, 1, model, t[i++]});
    }
    if (suffix.empty())
      c.hybrid = hy, c.multicast = mc, c.hybrid_model = hy_model, c.multicast_model = mc_model;
    else
      c.hybrid_qs = hy, c.multicast_qs = mc, c.hybrid_qs_model = hy_model, c.multicast_qs_model = mc_model;
  }
  return c;
}

std::vector<Both42Case> both42_cases(const std::string& machines, const std::string& qs, const std::string& sizes, bool with_qs,
                                     int jobs) {
  std::vector<Both42Case> out;
  for_each_scenario(machines, qs, sizes, [&](const std::string& levels, const std::string& q, std::size_t s, const Machine& m,
                                           const HpamModel& h) { out.push_back(both42_case(levels, q, s, m, h, with_qs, jobs)); });
  return out;
}

int both42(const std::string& machines, const std::string& qs, const std::string& sizes, const std::string& csv_path, bool with_qs) {
  Csv csv(csv_path);
  // One scenario's columns: the best hybrid and multicast sub-meshes by both_levels_scatter ("model")
  // and emulated, the emulated times, and the multicast's gain both ways.
  const auto columns = [](const Best& hm, const Best& he, const Best& mm, const Best& me) {
    fmt::print(" | {:>8} {:>8} {:>12.2f} | {:>8} {:>8} {:>12.2f} | {:>6.1f} {:>6.1f}", hm.str(), he.str(), to_us(he.t),
               mm.str(), me.str(), to_us(me.t), gain(hm, mm), gain(he, me));
  };
  fmt::print("{:>14} {:>4} {:>6} | {:>8} {:>8} {:>12} | {:>8} {:>8} {:>12} | {:>6} {:>6}", "levels", "Q", "S",
             "hy model", "hy emu", "us", "mc model", "mc emu", "us", "model%", "emu%");
  if (with_qs)
    fmt::print(" | {:>8} {:>8} {:>12} | {:>8} {:>8} {:>12} | {:>6} {:>6}", "hyQS mod", "hyQS emu", "us", "mcQS mod",
               "mcQS emu", "us", "model%", "emu%");
  fmt::print("\n");
  int change[2][3] = {};  // [model, emulated][smaller, the same, larger]
  for (const auto& c : both42_cases(machines, qs, sizes, with_qs, 1)) {
    csv.rows(c.levels, c.q, c.s, c.points);
    fmt::print("{:>14} {:>4} {:>6}", c.levels, c.q, c.s);
    columns(c.hybrid_model, c.hybrid, c.multicast_model, c.multicast);
    if (with_qs) {
      columns(*c.hybrid_qs_model, *c.hybrid_qs, *c.multicast_qs_model, *c.multicast_qs);
      ++change[kModel][optimum_change(c.hybrid_model, *c.hybrid_qs_model) + 1];
      ++change[kModel][optimum_change(c.multicast_model, *c.multicast_qs_model) + 1];
      ++change[kEmulated][optimum_change(c.hybrid, *c.hybrid_qs) + 1];
      ++change[kEmulated][optimum_change(c.multicast, *c.multicast_qs) + 1];
    }
    fmt::print("\n");
  }
  if (with_qs)
    for (Reading r : kReadings)
      fmt::print(
          "optimal sub-mesh with Q S bytes in level 1 against equal sizes, {}: larger {}, the same {}, smaller {}\n",
          r == kModel ? "model" : "emulated", change[r][2], change[r][1], change[r][0]);
  fmt::print(
      "model: HpamModel::both_levels_scatter, the paper's cost terms along section 4.2's steps (the paper gives no "
      "equation)\n");
  return 0;
}

// --- the claims ledger: every statement of sections 3 and 4 the emulator can test ---

// A statement checked over many cases (or series, or pairs): how many hold.
struct Count {
  int held = 0, total = 0;
  void add(bool ok) { held += ok, total += 1; }
  bool all() const { return total > 0 && held == total; }
  std::string of(const std::string& what) const { return fmt::format("{} of {} {}", held, total, what); }
};

// The smallest and largest of some percentages.
struct Span {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double x) { lo = std::min(lo, x), hi = std::max(hi, x); }
  std::string pct() const { return lo == hi ? fmt::format("{:.1f}%", lo) : fmt::format("{:.1f} to {:.1f}%", lo, hi); }
};

// Whether a sequence never grows, and whether it strictly falls at every step.
template <class T>
bool never_grows(const std::vector<T>& v) {
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[i - 1]) return false;
  return true;
}
template <class T>
bool strictly_falls(const std::vector<T>& v) {
  for (std::size_t i = 1; i < v.size(); ++i)
    if (!(v[i] < v[i - 1])) return false;
  return true;
}
template <class T>
bool strictly_rises(const std::vector<T>& v) {
  for (std::size_t i = 1; i < v.size(); ++i)
    if (!(v[i] > v[i - 1])) return false;
  return true;
}

// The grid of the claims run: the search's second levels, Q and sizes (sections 3.1, 4.1), the
// machines of section 3.2 and of section 4.2, and Figure 10's Q.
struct ClaimsGrid {
  std::string levels, qs, sizes, multi_machines, machines42, q_both;
  int jobs = 0;
};

// Indices of `items` ordered by `key` (second-level size, Q), stable.
template <class T, class K>
std::vector<std::size_t> order_by(const std::vector<T>& items, K&& key) {
  std::vector<std::size_t> idx(items.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return key(items[a]) < key(items[b]); });
  return idx;
}

int level2_size(const std::string& levels) {
  const HpamModel h =
      HpamModel::of(build_machine(hpam(levels.find('/') == std::string::npos ? "1x1/" + levels : levels, "2", false)));
  return h.r2 * h.c2;
}

// A section's figures read one way: by the paper's model (its equations) or by the emulation.
// Every claim of sections 3 and 4 is a row over such a view, tested once per reading.
template <class Figures>
struct View {
  const Figures& f;
  Reading r;
  bool model() const { return r == kModel; }
  /// How the reading was obtained, for "12 of 12 cases by eq. 5": `equations` or "emulation".
  const char* by(const char* equations) const { return model() ? equations : "emulation"; }
};
template <class Figures>
using Row = bench::ClaimRow<View<Figures>>;
using bench::Outcome;
using Measured = std::optional<Outcome>;

// Every row of a section, each at every reading of `readings` (model before emulated), its id
// followed by ".model" or ".emulated".
template <class Figures>
void add_section(claims::Ledger& L, const std::vector<Row<Figures>>& rows, const Figures& f,
                 std::initializer_list<Reading> readings = {kModel, kEmulated}) {
  for (const auto& row : rows)
    for (Reading r : readings)
      if (const auto o = row.measure(View<Figures>{f, r}))
        bench::add_claim(L, row, row.id + (r == kModel ? ".model" : ".emulated"), *o);
}

// Sections 4.1 (Fig. 8) and 4.2 (Fig. 9) both say that the multicast's gain falls as S grows: per
// series of (S, gain) in increasing S, whether it falls at every step; the note says in how many
// cases with S > 0 the multicast scatter lost to the hybrid (a negative gain), when it did.
Outcome gain_falls_with_size(const std::vector<std::vector<std::pair<std::size_t, double>>>& series, const char* what,
                             const char* by) {
  Count falls;
  int negative = 0, positive_sizes = 0;
  for (const auto& s : series) {
    std::vector<double> gains;
    for (const auto& [size, g] : s) {
      gains.push_back(g);
      if (size > 0) negative += g < 0, ++positive_sizes;
    }
    falls.add(strictly_falls(gains));
  }
  return {fmt::format("{} by {}", falls.of(what), by), falls.all(), 0,
          negative
              ? fmt::format("the multicast scatter is slower than the hybrid (gain < 0) in {} of the {} cases with "
                            "S > 0",
                            negative, positive_sizes)
              : ""};
}
const char* const kGainFallsWithSize = "gain falls at every larger S";

// --- sections 3.1 and 4.1: the search grid ---

struct SearchGrid {
  std::vector<std::string> levels, qs, sizes;
  std::vector<std::vector<std::vector<SearchCase>>> grid;  // [level][Q][size]
  std::vector<std::size_t> by_mesh, by_q;                  // level and Q indices, smallest first
  template <class F>
  void every_case(F&& f) const {
    for (const auto& per_q : grid)
      for (const auto& series : per_q)
        for (const auto& c : series) f(c);
  }
  template <class F>
  void every_series(F&& f) const {
    for (const auto& per_q : grid)
      for (const auto& series : per_q) f(series);
  }
};

SearchGrid search_grid(const ClaimsGrid& g) {
  SearchGrid s{split(g.levels), split(g.qs), split(g.sizes), {}, {}, {}};
  for (const auto& level : s.levels) {
    s.grid.emplace_back();
    for (const auto& q : s.qs) s.grid.back().push_back(search_series(level, q, g.sizes, g.jobs));
  }
  s.by_mesh = order_by(s.levels, level2_size);
  s.by_q = order_by(s.qs, [](const std::string& q) { return std::stoi(q); });
  return s;
}

using SearchView = View<SearchGrid>;

// "more than 43% ... for a 4x4 mesh", "more than 46% for 16x16, 64x64 and 256x256": the cases of
// the 4x4 level (large = false) or of levels of 256 processors and more.
Row<SearchGrid> multicast_bcast_gain(const char* id, bool large, double floor, const char* source) {
  return {id, source, fmt::format("> {:g}%", floor), [large, floor](const SearchView& v) -> Measured {
            Count above;
            Span span;
            v.f.every_case([&](const SearchCase& c) {
              const int n = c.h.r2 * c.h.c2;
              if (large ? n < 256 : n != 16) return;
              above.add(c.bcast_gain(v.r) > floor), span.add(c.bcast_gain(v.r));
            });
            if (above.total == 0) return std::nullopt;
            return Outcome{fmt::format("{}; above in {}", span.pct(), above.of("cases")), above.all(), 0,
                           v.model() ? "" : "best emulated multicast against best emulated hybrid"};
          }};
}

// Column partitions beat row partitions (p x q against q x p, p > q), broadcast or scatter.
Row<SearchGrid> columns_beat_rows(const char* id, bool bcast, const char* source) {
  return {id, source, "p2 x q2 no slower than q2 x p2 (p2 > q2)", [bcast](const SearchView& v) -> Measured {
            Count pairs;
            v.f.every_case([&](const SearchCase& c) {
              for_each_column_pair(
                  c.h, [&](int p, int q) { pairs.add(column_beats_row(bcast ? c.bcast : c.scatter, v.r, p, q)); });
            });
            return Outcome{fmt::format("{} by {}", pairs.of("pairs"), v.by(bcast ? "eq. 5" : "eq. 10")), pairs.all()};
          }};
}

// The best sub-mesh of every (mesh, Q) series never grows with S: `of` is its size in one case.
Measured best_never_grows(const SearchView& v, int (*of)(const SearchCase&, Reading), const char* equation) {
  Count shrinks;
  int strict = 0;
  v.f.every_series([&](const std::vector<SearchCase>& series) {
    std::vector<int> a;
    for (const auto& c : series) a.push_back(of(c, v.r));
    shrinks.add(never_grows(a)), strict += a.front() > a.back();
  });
  return Outcome{fmt::format("{} by {}", shrinks.of("(mesh, Q) series"), v.by(equation)), shrinks.all(), 0,
                 fmt::format("it falls from the smallest to the largest S in {} series, stays in the others", strict)};
}

const std::vector<Row<SearchGrid>>& search_rows() {
  static const std::vector<Row<SearchGrid>> rows = {
      {"sec3.1.hybrid-bcast-best",
       "Sec. 3.1: 'the \"optimal\" partitioning consists of two sub-meshes constructed along the columns of the mesh "
       "(i.e., r2 x c2/2) in the second level regardless of the size of the mesh, the size of the message or the value "
       "of Q'",
       "best r2 x c2/2 in every case",
       [](const SearchView& v) -> Measured {
         Count halves;
         Span fewer;
         v.f.every_case([&](const SearchCase& c) {
           halves.add(best_is_two_column_halves(c, v.r));
           if (!best_is_two_column_halves(c, v.r))
             fewer.add(c.h.r2 * c.h.c2 / 2.0 / (c.best_bcast[v.r].p * c.best_bcast[v.r].q));
         });
         return Outcome{fmt::format("{} by {}", halves.of("cases"), v.by("eq. 5")), halves.all(), 0,
                        halves.all() ? ""
                                     : fmt::format("where it misses the best has {:g} to {:g} times fewer processors",
                                                   fewer.lo, fewer.hi)};
       }},
      {"sec3.1.brute-force-worst",
       "Sec. 3.1: 'In all the tests conducted, the \"brute force\" approach results in worst case performance'",
       "brute force (1x1) slowest in every case",
       [](const SearchView& v) -> Measured {
         Count brute;
         int fastest = 0;
         v.f.every_case([&](const SearchCase& c) {
           brute.add(brute_force_is_slowest(c, v.r));
           fastest += c.brute[v.r] == c.best_bcast[v.r].t;
         });
         return Outcome{fmt::format("{} by {}", brute.of("cases"), v.by("eq. 5")), brute.all(), 0,
                        fastest ? fmt::format("brute force is the fastest in {}", fastest) : ""};
       }},
      {"sec3.1.multicast-bcast-best", "Sec. 3.1: 'the optimal sub-mesh size is r2/2 x 1' (multicast broadcast, eq. 6)",
       "best r2/2 x 1 in every case",
       [](const SearchView& v) -> Measured {
         Count half_column;
         int one_by_one = 0;
         v.f.every_case([&](const SearchCase& c) {
           half_column.add(multicast_best_is_half_column(c, v.r));
           one_by_one += c.best_mbcast[v.r].p == 1;
         });
         return Outcome{fmt::format("{} by {}", half_column.of("cases"), v.by("eq. 6")), half_column.all(), 0,
                        half_column.all() ? "" : fmt::format("the best is 1x1 in {}", one_by_one)};
       }},
      multicast_bcast_gain("sec3.1.multicast-bcast-gain.4x4", false, 43.0,
                           "Sec. 3.1: 'The added hardware reduces the execution time of the broadcast by more than 43% "
                           "... for a 4x4 mesh in the second level'"),
      multicast_bcast_gain("sec3.1.multicast-bcast-gain.16x16-up", true, 46.0,
                           "Sec. 3.1: 'The percent difference between the two approaches is more than 46% for 16x16, "
                           "64x64 and 256x256 mesh sizes in the second level'"),
      // Every step to the next larger mesh (same Q and S) and to the next larger Q (same mesh, S).
      {"sec3.1.multicast-bcast-gain-grows",
       "Sec. 3.1: 'the advantage of the multicast-based broadcast slightly increases as the size of the mesh in the "
       "second level and the value of Q increases'",
       "gain rises with the mesh and with Q",
       [](const SearchView& v) -> Measured {
         const SearchGrid& s = v.f;
         Count rises;
         for (std::size_t qi = 0; qi < s.qs.size(); ++qi)
           for (std::size_t si = 0; si < s.sizes.size(); ++si)
             for (std::size_t k = 1; k < s.by_mesh.size(); ++k)
               rises.add(s.grid[s.by_mesh[k]][qi][si].bcast_gain(v.r) >
                         s.grid[s.by_mesh[k - 1]][qi][si].bcast_gain(v.r));
         for (std::size_t li = 0; li < s.levels.size(); ++li)
           for (std::size_t si = 0; si < s.sizes.size(); ++si)
             for (std::size_t k = 1; k < s.by_q.size(); ++k)
               rises.add(s.grid[li][s.by_q[k]][si].bcast_gain(v.r) > s.grid[li][s.by_q[k - 1]][si].bcast_gain(v.r));
         if (rises.total == 0) return std::nullopt;
         return Outcome{
             rises.of("steps rise"), rises.all(), 0,
             "a step: the next larger mesh at the same Q and S, or the next larger Q at the same mesh and S"};
       }},
      columns_beat_rows(
          "sec3.1.columns-beat-rows.bcast", true,
          "Sec. 3.1 (Fig. 5): 'partitioning the mesh in the second level along the columns yields smaller "
          "execution time than if the mesh is partitioned along the rows'"),
      columns_beat_rows(
          "sec4.1.columns-beat-rows.scatter", false,
          "Sec. 4.1: 'partitioning across the columns first is better than partitioning across the rows'"),
      {"sec4.1.scatter-best-shrinks-with-S",
       "Sec. 4.1: 'large sub-meshes should be used with small messages and small sub-meshes should be used with large "
       "messages' (hybrid scatter)",
       "best p2 q2 never grows with S",
       [](const SearchView& v) { return best_never_grows(v, scatter_area, "eq. 10"); }},
      {"sec4.1.multicast-scatter-best-shrinks-with-S",
       "Sec. 4.1 (Fig. 7): 'the size of the optimal sub-mesh increases as the message size decreases' (multicast "
       "scatter)",
       "best p2 never grows with S",
       [](const SearchView& v) { return best_never_grows(v, multicast_scatter_height, "eq. 11"); }},
      {"fig7.multicast-scatter-best.4x4-q2",
       "Sec. 4.1: 'Figure 7 ... indicates that the optimal sub-mesh sizes are 2x1 and 1x1 for small and large message "
       "sizes, respectively' (4x4, Q = 2)",
       "2x1 at the smallest S, 1x1 at the largest",
       [](const SearchView& v) -> Measured {
         const SearchGrid& s = v.f;
         for (std::size_t li = 0; li < s.levels.size(); ++li)
           for (std::size_t qi = 0; qi < s.qs.size(); ++qi) {
             const auto& series = s.grid[li][qi];
             if (s.levels[li] != "4x4" || s.qs[qi] != "2" || series.size() < 2) continue;
             std::vector<std::string> bests;
             for (const auto& c : series) bests.push_back(c.best_mscatter[v.r].str());
             return Outcome{fmt::format("{} (S = {})", fmt::join(bests, " / "), fmt::join(s.sizes, " / ")),
                            bests.front() == "2x1" && bests.back() == "1x1"};
           }
         return std::nullopt;
       }},
      {"fig8.multicast-scatter-gain-falls-with-S",
       "Sec. 4.1 (Fig. 8): 'the gain in execution time due to the use of the hardware support for inter-level "
       "multicast decreases as the message size increases'",
       kGainFallsWithSize,
       [](const SearchView& v) -> Measured {
         std::vector<std::vector<std::pair<std::size_t, double>>> series;
         v.f.every_series([&](const std::vector<SearchCase>& cases) {
           series.emplace_back();
           for (const auto& c : cases) series.back().push_back({c.s, c.scatter_gain(v.r)});
         });
         return gain_falls_with_size(series, "(mesh, Q) series", v.by("eqs. 10, 11"));
       }},
      {"fig8.multicast-scatter-gain-falls-with-mesh",
       "Sec. 4.1 (Fig. 8): 'Except when S = 0, the percent difference between the optimal hybrid and the optimal "
       "multicast-based scatter operations decreases as the size of the mesh increases in the second level'",
       "gain falls with every larger mesh (S > 0)",
       [](const SearchView& v) -> Measured {
         const SearchGrid& s = v.f;
         Count with_mesh;
         std::vector<std::string> rises_at;  // "Q = 8, S = 4096: 8x8 not below 4x4"
         for (std::size_t qi = 0; qi < s.qs.size(); ++qi)
           for (std::size_t si = 0; si < s.sizes.size(); ++si) {
             if (size_of(s.sizes[si]) == 0 || s.by_mesh.size() < 2) continue;
             std::vector<double> gains;
             for (std::size_t li : s.by_mesh) gains.push_back(s.grid[li][qi][si].scatter_gain(v.r));
             with_mesh.add(strictly_falls(gains));
             for (std::size_t k = 1; k < s.by_mesh.size(); ++k)
               if (!(gains[k] < gains[k - 1]))
                 rises_at.push_back(fmt::format("Q = {}, S = {}: {} not below {}", s.qs[qi], s.sizes[si],
                                                s.levels[s.by_mesh[k]], s.levels[s.by_mesh[k - 1]]));
           }
         if (with_mesh.total == 0) return std::nullopt;
         return Outcome{with_mesh.of("(Q, S) series"), with_mesh.all(), 0,
                        with_mesh.held == 0 ? fmt::format("misses in every series ({} of {} steps)", rises_at.size(),
                                                          with_mesh.total * (s.by_mesh.size() - 1))
                                            : fmt::format("{}", fmt::join(rises_at, "; "))};
       }},
      {"sec4.1.multicast-scatter-gain-grows-with-Q",
       "Sec. 4.1: 'for a given size mesh, the percent difference slightly increases as the value of Q increases'",
       "gain rises with every larger Q",
       [](const SearchView& v) -> Measured {
         const SearchGrid& s = v.f;
         Count with_q;
         for (std::size_t li = 0; li < s.levels.size(); ++li)
           for (std::size_t si = 0; si < s.sizes.size(); ++si) {
             if (s.by_q.size() < 2) continue;
             std::vector<double> gains;
             for (std::size_t qi : s.by_q) gains.push_back(s.grid[li][qi][si].scatter_gain(v.r));
             with_q.add(strictly_rises(gains));
           }
         if (with_q.total == 0) return std::nullopt;
         return Outcome{with_q.of("(mesh, S) series"), with_q.all()};
       }},
  };
  return rows;
}

// --- section 3.2: several level-1 processors (eqs. 7 and 8) ---

using MultiView = View<std::vector<MultiCase>>;

// "more than 31%, 41% and 45% when Q = 2, 8, and 32" on 4x4 / 16x16.
Row<std::vector<MultiCase>> multi_gain_4x4_16x16(const char* q, double floor) {
  return {fmt::format("sec3.2.gain.4x4-16x16.q{}", q),
          "Sec. 3.2: 'For an HPAM machine with r1 x c1 = 4x4 and r2 x c2 = 16x16, the multicast-based broadcast has an "
          "execution time less than that of the hybrid-based approach by more than 31%, 41% and 45% when Q = 2, 8, and "
          "32'",
          fmt::format("> {:g}% at Q = {}", floor, q), [qv = std::string(q), floor](const MultiView& v) -> Measured {
            Count above;
            Span span;
            for (const auto& c : v.f)
              if (c.h.r1 == 4 && c.h.c1 == 4 && c.h.r2 == 16 && c.h.c2 == 16 && c.q == qv)
                above.add(c.gain(v.r) > floor), span.add(c.gain(v.r));
            if (above.total == 0) return std::nullopt;
            return Outcome{fmt::format("{} by {}; above in {}", span.pct(), v.by("eqs. 7, 8"), above.of("sizes")),
                           above.all()};
          }};
}

const std::vector<Row<std::vector<MultiCase>>>& multi_rows() {
  static const std::vector<Row<std::vector<MultiCase>>> rows = {
      multi_gain_4x4_16x16("2", 31.0),
      multi_gain_4x4_16x16("8", 41.0),
      multi_gain_4x4_16x16("32", 45.0),
      {"sec3.2.gain.64x64",
       "Sec. 3.2: 'percent differences of 38% to 46% were obtained when the size of the mesh in the second level was "
       "64x64'",
       "38 to 46%",
       [](const MultiView& v) -> Measured {
         Count inside;
         Span span;
         for (const auto& c : v.f)
           if (c.h.r2 == 64 && c.h.c2 == 64) inside.add(c.gain(v.r) >= 38 && c.gain(v.r) <= 46), span.add(c.gain(v.r));
         if (inside.total == 0) return std::nullopt;
         return Outcome{fmt::format("{} by {}; inside in {}", span.pct(), v.by("eqs. 7, 8"), inside.of("cases")),
                        inside.all()};
       }},
      // Every step to a larger second level (same Q, S) and to a larger Q (same machine, S).
      {"sec3.2.gain-grows",
       "Sec. 3.2: 'This percent difference increases as the size of the mesh in the second level and the value of Q "
       "increases'",
       "gain rises with the second level and with Q",
       [](const MultiView& v) -> Measured {
         Count rises;
         for (const MultiCase& a : v.f)
           for (const MultiCase& b : v.f) {
             if (a.s != b.s) continue;
             const bool next_mesh = a.q == b.q && b.h.r2 * b.h.c2 > a.h.r2 * a.h.c2;
             const bool next_q = a.levels == b.levels && std::stoi(b.q) > std::stoi(a.q);
             if (next_mesh || next_q) rises.add(b.gain(v.r) > a.gain(v.r));
           }
         if (rises.total == 0) return std::nullopt;
         return Outcome{fmt::format("{} by {}", rises.of("pairs rise"), v.by("eqs. 7, 8")), rises.all(), 0,
                        "a pair: two machines at the same Q and S, or two values of Q on one machine at the same S"};
       }},
  };
  return rows;
}

// --- section 4.2, level 2 only (eqs. 12-14, Figure 9) ---

// The cases by (machine, Q) series, each in increasing S.
template <class Case>
std::vector<std::vector<Case>> by_series(const std::vector<Case>& cases, std::size_t per_series) {
  std::vector<std::vector<Case>> out;
  for (std::size_t first = 0; first < cases.size(); first += per_series)
    out.emplace_back(cases.begin() + static_cast<std::ptrdiff_t>(first),
                     cases.begin() + static_cast<std::ptrdiff_t>(first + per_series));
  return out;
}

using Scatter42Series = std::vector<std::vector<Scatter42Case>>;
using Scatter42View = View<Scatter42Series>;

// The height of the best sub-mesh (`best`: the hybrid's or the multicast's) never grows with S, per
// (machine, Q) series.
Measured height_never_grows(const Scatter42View& v, Best (Scatter42Case::*best)[2], const char* equations) {
  Count height;
  for (const auto& series : v.f) {
    std::vector<int> p;
    for (const auto& c : series) p.push_back((c.*best)[v.r].p);
    height.add(never_grows(p));
  }
  return Outcome{fmt::format("{} by {}", height.of("(machine, Q) series"), v.by(equations)), height.all()};
}

const std::vector<Row<Scatter42Series>>& scatter42_rows() {
  static const std::vector<Row<Scatter42Series>> rows = {
      {"sec4.2.best-q2-within-f2",
       "Sec. 4.2: 'Several HPAM configurations were tested when Q = 2, 8 and 32 and the results obtained indicate that "
       "the sub-mesh size of choice satisfies q2 <= f2'",
       "q2 <= f2 in every case",
       [](const Scatter42View& v) -> Measured {
         Count within;
         for (const auto& series : v.f)
           for (const auto& c : series) within.add(c.within_f2(v.r));
         return Outcome{fmt::format("{} by {}", within.of("cases"), v.by("eqs. 12, 13")), within.all()};
       }},
      {"sec4.2.best-height-falls-with-S",
       "Sec. 4.2: 'Small messages have a corresponding optimal sub-mesh with large height. Large messages have a "
       "corresponding optimal sub-mesh with small height'",
       "best p2 never grows with S",
       [](const Scatter42View& v) { return height_never_grows(v, &Scatter42Case::hybrid, "eqs. 12, 13"); }},
      {"sec4.2.multicast-best-shrinks-with-S",
       "Sec. 4.2 (eq. 14): 'large sub-meshes should be used with small messages and small sub-meshes should be used "
       "with large messages'",
       "best p2 never grows with S",
       [](const Scatter42View& v) { return height_never_grows(v, &Scatter42Case::multicast, "eq. 14"); }},
      {"fig9.gain-falls-with-S",
       "Sec. 4.2 (Fig. 9): 'as the message size increases, the gain due to the use of hardware support for "
       "inter-level multicast decreases'",
       kGainFallsWithSize,
       [](const Scatter42View& v) -> Measured {
         std::vector<std::vector<std::pair<std::size_t, double>>> series;
         for (const auto& cases : v.f) {
           series.emplace_back();
           for (const auto& c : cases) series.back().push_back({c.s, c.gain(v.r)});
         }
         return gain_falls_with_size(series, "(machine, Q) series", v.by("eqs. 12-14"));
       }},
  };
  return rows;
}

// --- section 4.2, both levels (Figure 10; the paper gives no equation: emulation only) ---

struct Both42Figures {
  std::vector<Both42Case> cases;                // by machine, Q, S
  std::vector<std::vector<Both42Case>> series;  // by (machine, Q), each in increasing S
  std::vector<std::string> machines;
  std::vector<std::size_t> by_mesh;  // machine indices, smallest second level first
};
using Both42View = View<Both42Figures>;

const char* const kNoModel = "emulation only: the paper gives no equation for the scatter to both levels";
// The same statement by HpamModel::both_levels_scatter, for the note: ours, not the paper's.
std::string derived_model(const std::string& count) {
  return fmt::format("the paper's cost terms along section 4.2's steps (both_levels_scatter, ours): {}", count);
}
const char* const kBothShrinks =
    "Sec. 4.2, both levels: 'large sub-mesh sizes should be used with small messages and small sub-mesh sizes should "
    "be used with large messages'";

// The best sub-mesh's size (`of`: p2 q2 or p2) never grows with S, per (machine, Q) series.
Measured every_both_series(const Both42View& v, int (*of)(const Both42Case&)) {
  Count shrinks;
  for (const auto& series : v.f.series) {
    std::vector<int> a;
    for (const auto& c : series) a.push_back(of(c));
    shrinks.add(never_grows(a));
  }
  return Outcome{shrinks.of("(machine, Q) series"), shrinks.all(), 0, kNoModel};
}

// "the size of the optimal sub-mesh is larger than that of the corresponding same size message case
// ... applicable to all the cases tested and to the hybrid as well as the multicast": with S > 0.
Row<Both42Figures> qs_optimum_larger(bool multicast) {
  return {
      fmt::format("sec4.2.qs-optimum-larger.{}", multicast ? "multicast" : "hybrid"),
      "Sec. 4.2: 'When the processors of the first level and second level receive a message of size Q S and S, "
      "respectively, the size of the optimal sub-mesh is larger than that of the corresponding same size message "
      "case'",
      "larger in every case", [multicast](const Both42View& v) -> Measured {
        int change[2][3] = {};  // [model, emulated][smaller, the same, larger]
        for (const auto& c : v.f.cases)
          if (c.s > 0) {
            ++change[kEmulated][(multicast ? optimum_change(c.multicast, *c.multicast_qs)
                                           : optimum_change(c.hybrid, *c.hybrid_qs)) +
                                1];
            ++change[kModel][(multicast ? optimum_change(c.multicast_model, *c.multicast_qs_model)
                                        : optimum_change(c.hybrid_model, *c.hybrid_qs_model)) +
                             1];
          }
        const int* e = change[kEmulated];
        const int* m = change[kModel];
        const int total = e[0] + e[1] + e[2];
        return Outcome{
            fmt::format("{} of {} cases with S > 0", e[2], total), total > 0 && e[2] == total, 0,
            fmt::format("the same in {}, smaller in {}; {}; {}", e[1], e[0], kNoModel,
                        derived_model(fmt::format("larger in {}, the same in {}, smaller in {}", m[2], m[1], m[0])))};
      }};
}

const std::vector<Row<Both42Figures>>& both42_rows() {
  static const std::vector<Row<Both42Figures>> rows = {
      {"sec4.2.both.hybrid-best-shrinks-with-S", kBothShrinks, "best p2 q2 never grows with S",
       [](const Both42View& v) {
         return every_both_series(v, [](const Both42Case& c) { return c.hybrid.p * c.hybrid.q; });
       }},
      {"sec4.2.both.multicast-best-shrinks-with-S", kBothShrinks, "best p2 never grows with S",
       [](const Both42View& v) { return every_both_series(v, [](const Both42Case& c) { return c.multicast.p; }); }},
      {"fig10.gain-largest-at-small-S",
       "Sec. 4.2 (Fig. 10): 'The scatter operation benefits most from hardware support of inter-level multicast when "
       "the size of the message is small'",
       "gain largest at the smallest S",
       [](const Both42View& v) -> Measured {
         Count small_best;
         for (const auto& series : v.f.series) {
           std::vector<double> gains;
           for (const auto& c : series) gains.push_back(gain(c.hybrid, c.multicast));
           small_best.add(*std::max_element(gains.begin(), gains.end()) == gains.front());
         }
         return Outcome{small_best.of("(machine, Q) series"), small_best.all(), 0, kNoModel};
       }},
      // Per (Q, S), across the machines ordered by their second level.
      {"fig10.gain-falls-with-mesh",
       "Sec. 4.2 (Fig. 10): 'as the size of the processor mesh in the second level increases the percent gain in "
       "execution time due to the use of the inter-level multicast hardware support decreases'",
       "gain falls with every larger second level",
       [](const Both42View& v) -> Measured {
         const auto& cases = v.f.cases;
         Count falls, model_falls;
         std::vector<std::string> where, gains_not_falling;
         const std::size_t per_machine = cases.size() / v.f.machines.size();
         for (std::size_t k = 0; k < per_machine && v.f.machines.size() > 1; ++k) {
           std::vector<double> gains, model_gains;
           for (std::size_t mi : v.f.by_mesh) {
             const Both42Case& c = cases[mi * per_machine + k];
             gains.push_back(gain(c.hybrid, c.multicast));
             model_gains.push_back(gain(c.hybrid_model, c.multicast_model));
           }
           falls.add(strictly_falls(gains));
           model_falls.add(strictly_falls(model_gains));
           if (strictly_falls(gains)) where.push_back(fmt::format("S = {}", cases[k].s));
           else
             gains_not_falling.push_back(fmt::format("S = {}: {:.1f}% emulated, {:.1f}% modeled", cases[k].s,
                                                     fmt::join(gains, "/"), fmt::join(model_gains, "/")));
         }
         if (falls.total == 0) return std::nullopt;
         std::string note =
             where.empty() ? kNoModel : fmt::format("it falls at {}; {}", fmt::join(where, ", "), kNoModel);
         if (!gains_not_falling.empty()) note += fmt::format(" (not at {})", fmt::join(gains_not_falling, "; "));
         return Outcome{falls.of("(Q, S) series"), falls.all(), 0,
                        fmt::format("{}; {}", note, derived_model(model_falls.of("(Q, S) series fall")))};
       }},
      qs_optimum_larger(false),
      qs_optimum_larger(true),
  };
  return rows;
}

int print_claims(const ClaimsGrid& g, claims::Format format) {
  // Bad input fails before minutes of emulation: every machine of the grid parses, and the sizes
  // are whole numbers in increasing order (every ordering across sizes reads them so).
  for (const auto& level : split(g.levels))
    for (const auto& q : split(g.qs)) HpamModel::of(build_machine(hpam("1x1/" + level, q)));
  for (const auto& [machines, qs] : {std::pair{g.multi_machines, g.qs}, std::pair{g.machines42, g.qs}, std::pair{g.machines42, g.q_both}})
    for (const auto& levels : split(machines))
      for (const auto& q : split(qs)) HpamModel::of(build_machine(hpam(levels, q)));
  const auto sizes = split(g.sizes);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t size = size_of(sizes[i], "claims: --sizes");
    if (i > 0 && !(size > size_of(sizes[i - 1]))) throw UsageError("claims: --sizes must increase");
  }
  claims::Ledger L;
  add_section(L, search_rows(), search_grid(g));
  add_section(L, multi_rows(), multi_cases(g.multi_machines, g.qs, g.sizes, g.jobs));
  add_section(L, scatter42_rows(), by_series(scatter42_cases(g.machines42, g.qs, g.sizes, g.jobs), sizes.size()));
  const auto both = both42_cases(g.machines42, g.q_both, g.sizes, true, g.jobs);
  const auto machines42 = split(g.machines42);
  add_section(L, both42_rows(),
              Both42Figures{both, by_series(both, sizes.size()), machines42, order_by(machines42, level2_size)},
              {kEmulated});
  if (format == claims::Format::text)
    fmt::print("Paper 001 claims: sections 3.1, 4.1 on hpam:1x1/{{{}}}; 3.2 on hpam:{{{}}}; 4.2 on hpam:{{{}}}; Q = {{{}}} (Figure 10: Q = "
               "{}); S = {{{}}} bytes\n\n",
               g.levels, g.multi_machines, g.machines42, g.qs, g.q_both, g.sizes);
  L.print(stdout, format);
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
  sc->add_option("--csv", csv, "write every point to this CSV file (for plot_paper001.py, Figure 9)");
  std::string qs_both = "8";
  auto* bo = app.add_subcommand("both42", "section 4.2: scatter to both levels, equal sizes, hybrid and multicast emulated (Figure 10)");
  add_scenario_options(bo, machines42, qs_both, sizes);
  bo->add_option("--csv", csv, "write every point to this CSV file (for plot_paper001.py, Figure 10)");
  ClaimsGrid grid{levels, qs, sizes, machines, machines42, qs_both, 0};
  std::string format = "text";
  auto* cl = app.add_subcommand("claims", "every testable statement of sections 3 and 4 beside ours (models and emulation), with verdicts");
  cl->add_option("--format", format, "text, csv or markdown")->check(CLI::IsMember({"text", "csv", "markdown"}))->capture_default_str();
  cl->add_option("--levels", grid.levels, "second levels of sections 3.1 and 4.1 (one level-1 processor)")->capture_default_str();
  cl->add_option("--q", grid.qs, "values of Q, comma-separated")->capture_default_str();
  cl->add_option("--sizes", grid.sizes, "message sizes S in bytes, increasing, comma-separated")->capture_default_str();
  cl->add_option("--multi-levels", grid.multi_machines, "HPAM levels of section 3.2")->capture_default_str();
  cl->add_option("--levels42", grid.machines42, "HPAM levels of section 4.2")->capture_default_str();
  cl->add_option("--q-both", grid.q_both, "Q of section 4.2's scatter to both levels (Figure 10)")->capture_default_str();
  cl->add_option("--jobs", grid.jobs, "emulations at once (0: the host's cores)")->check(CLI::Range(0, 1024))->capture_default_str();
  std::vector<std::string> plot_inputs;
  auto* pl = app.add_subcommand("plot", "draw Figures 5-10 from the CSV files of search, scatter42 and both42 (plot_paper001.py)");
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
    if (cl->parsed()) return print_claims(grid, claims::parse_format(format));
    return search(levels, qs, sizes, csv, jobs);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
