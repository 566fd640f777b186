// Paper 000 (Hambrusch, Hameed, Khokhar, "Communication Operations on Coarse-Grained Mesh
// Architectures") on the emulated Delta: the reproduction of its tables and the fit of the delta
// machine's cost parameters to Figure 9.
//
//   paper000 fig9   all-to-all, 8 algorithms x 16..16384 B, ours beside the paper's (Figure 9)
//   paper000 fig2   one-to-all (scatter), the paper's Figure 2 layout
//   paper000 fig6   all-to-one (gather), the paper's Figure 6 layout
//   paper000 fit    coordinate descent of the delta parameters against Figure 9
//   paper000 claims every number and ordering of the paper's Figures 2, 5, 6, 9, 10, 11 and its
//                   text that the emulator can test, the paper's beside ours, with a verdict; a
//                   claim that flips on one of the preset's open variants is undecided
//                   (--preset-only: the preset alone)
//   paper000 identify what Figure 9 alone leaves open around the preset
//   paper000 calibrate the whole claims table scored over scans of the delta parameters: for each
//                   parameter, the values the paper's tables and text together leave open
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "claim_rows.hpp"
#include "touchstone/experiment/claims.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "cli/parse_command_line.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using namespace touchstone;

const std::vector<std::size_t> kSizes = {16384, 8192, 4096, 2048, 1024, 512, 256, 128, 64, 32, 16};  // paper order

// The paper's row names, and ours.
const std::vector<std::pair<std::string, std::string>> kFig9 = {
    {"1-lev-direct", "alltoall/1-lev-dir"}, {"1-lev-lin", "alltoall/1-lev-lin"},
    {"1-lev-xor", "alltoall/1-lev-xor"},    {"1-lev-balance", "alltoall/1-lev-bal"},
    {"2-lev-sq", "alltoall/2-lev-sq"},      {"2-lev-c,r", "alltoall/2-lev-c,r"},
    {"2-lev-c,r-int", "alltoall/2-lev-c,r-int"}, {"logp-lev-bfly", "alltoall/logp-lev-bfly"}};
const std::vector<std::string> kFig2 = {"scatter/1-lev-dir",  "scatter/1-lev-our-br", "scatter/2-lev-rec",
                                        "scatter/3-lev-sq",   "scatter/logp-lev-sq",  "scatter/logp-lev-rec(0.75)",
                                        "scatter/1-lev-sys-br"};
const std::vector<std::string> kFig6 = {"gather/1-lev-dir", "gather/2-lev-rec", "gather/3-lev-sq", "gather/logp-lev-sq",
                                        "gather/logp-lev-rec(0.6)"};

// Figure 9 as published: paper[algorithm row][size] in ms; missing cells ("-") are absent.
using Table = std::map<std::string, std::map<std::size_t, double>>;

Table read_reference(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read the Figure 9 reference '{}'", path));
  Table t;
  std::vector<std::size_t> cols;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = experiment::csv_fields(line);
    if (f[0] == "algorithm") {
      for (std::size_t i = 1; i < f.size(); ++i) cols.push_back(std::stoul(f[i]));
      continue;
    }
    for (std::size_t i = 1; i < f.size() && i <= cols.size(); ++i)
      if (!f[i].empty() && f[i][0] != '-') t[f[0]][cols[i - 1]] = std::stod(f[i]);
  }
  return t;
}

struct Cell {
  std::string algorithm;
  std::size_t size;
  double ms = NAN;
  std::string error;
};

// Runs every (algorithm, size) cell through the experiment harness, `jobs` at once; phantom payloads
// when `phantom` (same times).
void run_cells(const Machine& m, std::vector<Cell>& cells, int jobs, bool phantom) {
  std::vector<experiment::Job> js;
  for (const auto& c : cells) {
    experiment::Job j{&m, &algorithms::find(c.algorithm), algorithms::Args{c.size, 0, !phantom}, {}};
    j.options.phantom_payloads = phantom;
    js.push_back(std::move(j));
  }
  const auto outcomes = experiment::run_jobs(js, {.parallel = jobs});
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (outcomes[i].record) cells[i].ms = to_us(outcomes[i].record->result.makespan) / 1e3;
    else cells[i].error = outcomes[i].error;
  }
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;  // average rank
    i = j + 1;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double num = 0, da = 0, db = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : NAN;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return NAN;
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Comparison {
  double rho = NAN, median_ratio = NAN;
  int paper_winner_rank = 0;
  std::string paper_winner;
  int algorithms = 0;
};

// Per size: Spearman rank correlation of our times with the paper's, the rank in ours of the
// paper's fastest algorithm, and the median of ours/paper.
std::map<std::size_t, Comparison> compare(const Table& paper, const std::vector<Cell>& cells) {
  std::map<std::size_t, Comparison> out;
  for (auto size : kSizes) {
    std::vector<double> ours, theirs, ratio;
    std::vector<std::string> names;
    for (const auto& [pname, oname] : kFig9) {
      auto pr = paper.find(pname);
      if (pr == paper.end() || !pr->second.count(size)) continue;
      auto it = std::find_if(cells.begin(), cells.end(),
                             [&](const Cell& c) { return c.algorithm == oname && c.size == size; });
      if (it == cells.end() || std::isnan(it->ms)) continue;
      ours.push_back(it->ms);
      theirs.push_back(pr->second.at(size));
      ratio.push_back(it->ms / pr->second.at(size));
      names.push_back(pname);
    }
    Comparison c;
    c.algorithms = static_cast<int>(ours.size());
    if (ours.size() >= 2) {
      c.rho = spearman(ours, theirs);
      c.median_ratio = median(ratio);
      const auto w = static_cast<std::size_t>(std::min_element(theirs.begin(), theirs.end()) - theirs.begin());
      c.paper_winner = names[w];
      c.paper_winner_rank = 1 + static_cast<int>(std::count_if(ours.begin(), ours.end(), [&](double x) { return x < ours[w]; }));
    }
    out[size] = c;
  }
  return out;
}

// How far a lead in our Figure 9 can be trusted: the pairs of algorithms (at one size) that we
// separate by less than a lead, and how many of them the Delta ran in the other order. The delta
// preset's ranking evidence (machines/src/delta.cpp), which `touchstone sweep` prints beside a
// small lead, comes from this table.
void print_pair_orders(const Machine& m, const Table& paper, const std::vector<Cell>& cells, bool markdown) {
  std::vector<std::vector<std::pair<double, double>>> groups;
  for (auto size : kSizes) {
    auto& g = groups.emplace_back();
    for (const auto& [pname, oname] : kFig9) {
      auto pr = paper.find(pname);
      if (pr == paper.end() || !pr->second.count(size)) continue;
      auto it = std::find_if(cells.begin(), cells.end(), [&](const Cell& c) { return c.algorithm == oname && c.size == size; });
      if (it != cells.end() && !std::isnan(it->ms)) g.emplace_back(it->ms, pr->second.at(size));
    }
  }
  fmt::print("\nPairs of algorithms at one size, by how far apart ours puts them: how many the Delta ran in the other order\n\n");
  if (markdown) fmt::print("| our lead | pairs below | reordered on the Delta | pairs at or above | reordered on the Delta |\n|---:|---:|---:|---:|---:|\n");
  else fmt::print("{:>8} {:>11} {:>10} {:>17} {:>10}\n", "lead", "pairs below", "reordered", "pairs at or above", "reordered");
  for (const double lead : {0.02, 0.05, 0.10, 0.20}) {
    const auto o = claims::ordering_by_lead(groups, lead);
    const auto share = [](const claims::PairOrders& p) {
      return p.pairs ? fmt::format("{} ({:.0f}%)", p.reordered, 100.0 * p.reordered / p.pairs) : std::string("-");
    };
    if (markdown)
      fmt::print("| {:.0f}% | {} | {} | {} | {} |\n", 100 * lead, o.below.pairs, share(o.below), o.at_least.pairs, share(o.at_least));
    else
      fmt::print("{:>7.0f}% {:>11} {:>10} {:>17} {:>10}\n", 100 * lead, o.below.pairs, share(o.below), o.at_least.pairs, share(o.at_least));
  }
  // The preset declares these counts for `touchstone sweep` (machines/src/delta.cpp): on the
  // preset itself, say whether they still hold, so that a refit cannot leave them stale unnoticed.
  const auto declared = ranking_evidence(m.name);
  if (!declared || m.name != "delta:16x16") return;
  const auto o = claims::ordering_by_lead(groups, declared->decisive_lead);
  const bool same = o.below.pairs == declared->close_pairs && o.below.reordered == declared->close_reordered &&
                    o.at_least.pairs == declared->far_pairs && o.at_least.reordered == declared->far_reordered;
  fmt::print("\nThe delta preset declares, at {:.0f}%: {} of {} below, {} of {} at or above (machines/src/delta.cpp): {}\n",
             100 * declared->decisive_lead, declared->close_reordered, declared->close_pairs, declared->far_reordered,
             declared->far_pairs, same ? "the same as counted here" : "NOT what is counted here; update the declaration");
}

void print_fig9(const Machine& m, const Table& paper, const std::vector<Cell>& cells, bool markdown) {
  const char* sep = markdown ? " | " : " ";
  fmt::print("Figure 9 on {}: all-to-all, times in ms, ours / paper (paper 000; '-' = not run there)\n\n", m.name);
  std::string head = markdown ? "| algorithm" : fmt::format("{:<14}", "algorithm");
  for (auto s : kSizes) head += markdown ? fmt::format(" | {}", s) : fmt::format(" {:>17}", s);
  fmt::print("{}{}\n", head, markdown ? " |" : "");
  if (markdown) {
    fmt::print("|---");
    for (std::size_t i = 0; i < kSizes.size(); ++i) fmt::print("|---:");
    fmt::print("|\n");
  }
  for (const auto& [pname, oname] : kFig9) {
    std::string row = markdown ? "| " + pname : fmt::format("{:<14}", pname);
    for (auto s : kSizes) {
      auto it = std::find_if(cells.begin(), cells.end(), [&](const Cell& c) { return c.algorithm == oname && c.size == s; });
      const std::string ours = it == cells.end() || std::isnan(it->ms) ? "n/a" : fmt::format("{:.1f}", it->ms);
      auto pr = paper.find(pname);
      const std::string theirs = pr != paper.end() && pr->second.count(s) ? fmt::format("{:.1f}", pr->second.at(s)) : "-";
      row += markdown ? fmt::format("{}{} / {}", sep, ours, theirs) : fmt::format(" {:>17}", ours + "/" + theirs);
    }
    fmt::print("{}{}\n", row, markdown ? " |" : "");
  }
  fmt::print("\n");
  const auto cmp = compare(paper, cells);
  if (markdown) fmt::print("| size | algorithms | Spearman rho | paper's winner | its rank in ours | median ours/paper |\n|---:|---:|---:|---|---:|---:|\n");
  else fmt::print("{:>6} {:>5} {:>8} {:>14} {:>6} {:>8}\n", "size", "algs", "rho", "paper winner", "rank", "median");
  for (auto s : kSizes) {
    const auto& c = cmp.at(s);
    if (markdown)
      fmt::print("| {} | {} | {:.2f} | {} | {} | {:.2f} |\n", s, c.algorithms, c.rho, c.paper_winner, c.paper_winner_rank, c.median_ratio);
    else
      fmt::print("{:>6} {:>5} {:>8.2f} {:>14} {:>6} {:>8.2f}\n", s, c.algorithms, c.rho, c.paper_winner, c.paper_winner_rank,
                 c.median_ratio);
  }
  print_pair_orders(m, paper, cells, markdown);
  for (const auto& c : cells)
    if (!c.error.empty()) fmt::print(stderr, "error: {} size {}: {}\n", c.algorithm, c.size, c.error);
}

void print_plain(const Machine& m, const std::string& title, const std::vector<std::string>& algs,
                 const std::vector<Cell>& cells) {
  fmt::print("{} on {}: times in ms (paper 000; the paper's measured values of this figure are withheld)\n\n",
             title, m.name);
  fmt::print("{:<28}", "algorithm");
  for (auto s : kSizes) fmt::print(" {:>9}", s);
  fmt::print("\n");
  for (const auto& a : algs) {
    fmt::print("{:<28}", a);
    for (auto s : kSizes) {
      auto it = std::find_if(cells.begin(), cells.end(), [&](const Cell& c) { return c.algorithm == a && c.size == s; });
      fmt::print(" {:>9}", it == cells.end() || std::isnan(it->ms) ? "n/a" : fmt::format("{:.2f}", it->ms));
    }
    fmt::print("\n");
  }
  for (const auto& c : cells)
    if (!c.error.empty()) fmt::print(stderr, "error: {} size {}: {}\n", c.algorithm, c.size, c.error);
}

std::vector<Cell> cells_for(const std::vector<std::string>& algs, const std::vector<std::size_t>& sizes) {
  std::vector<Cell> cells;
  for (const auto& a : algs)
    for (auto s : sizes) cells.push_back(Cell{a, s, NAN, {}});
  // Largest first, so that the long runs start early.
  std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) { return a.size > b.size; });
  return cells;
}

// The fit: parameters in log space, coordinate descent with shrinking multiplicative steps,
// minimizing the mean squared log ratio ours/paper over the Figure 9 cells of the chosen sizes.
struct Param {
  const char* key;
  double value;
};

// `base` with the parameters at their values.
MachineSpec spec_of(MachineSpec base, const std::vector<Param>& ps) {
  for (const auto& p : ps) base.options.push_back({p.key, fmt::format("{:.4g}", p.value)});
  return base;
}
// The injection and ejection channels at the link's byte time `ns_per_byte`.
MachineSpec with_link(MachineSpec spec, double ns_per_byte) {
  for (const char* key : {"inject_ns_per_byte", "eject_ns_per_byte"})
    spec.options.push_back({key, fmt::format("{:.4g}", ns_per_byte)});
  return spec;
}

// The fit's objective: the mean squared log ratio ours/paper over the Figure 9 cells of `sizes`
// that the paper has, on machine `spec`.
double fig9_loss(const MachineSpec& spec, const Table& paper, const std::vector<std::size_t>& sizes, int jobs) {
  const Machine m = build_machine(spec);
  std::vector<std::string> algs;
  for (const auto& [pname, oname] : kFig9) algs.push_back(oname);
  std::vector<Cell> cells;
  for (const auto& c : cells_for(algs, sizes)) {
    const auto& pname = std::find_if(kFig9.begin(), kFig9.end(), [&](auto& p) { return p.second == c.algorithm; })->first;
    if (paper.count(pname) && paper.at(pname).count(c.size)) cells.push_back(c);  // only cells the paper has
  }
  run_cells(m, cells, jobs, true);
  double sum = 0;
  int n = 0;
  for (const auto& c : cells) {
    const auto& pname = std::find_if(kFig9.begin(), kFig9.end(), [&](auto& p) { return p.second == c.algorithm; })->first;
    if (std::isnan(c.ms)) continue;
    const double d = std::log(c.ms / paper.at(pname).at(c.size));
    sum += d * d;
    ++n;
  }
  return n ? sum / n : INFINITY;
}

// The parameters of the fit with the machine's values (ps), injection and ejection keeping the
// link's byte time.
std::vector<Param> fit_params_of(const Machine& m0) {
  return {{"send_us", static_cast<double>(m0.costs.send_overhead) / 1e6},
          {"recv_us", static_cast<double>(m0.costs.recv_overhead) / 1e6},
          {"send_ns_per_byte", static_cast<double>(m0.costs.send_per_byte) / 1e3},
          {"recv_ns_per_byte", static_cast<double>(m0.costs.recv_per_byte) / 1e3},
          {"link_ns_per_byte", static_cast<double>(m0.net.link_byte_time) / 1e3},
          {"match_ns", static_cast<double>(m0.costs.match_per_entry) / 1e3},
          {"copy_ns_per_byte", static_cast<double>(m0.costs.copy_per_byte) / 1e3},
          {"copy_ns_per_piece", static_cast<double>(m0.costs.copy_per_piece) / 1e3}};
}

// `base` with the parameters at their values, the injection and ejection channels at the link's.
MachineSpec spec_with_link(const MachineSpec& base, const std::vector<Param>& ps) {
  MachineSpec s = spec_of(base, ps);
  for (const auto& p : ps)
    if (std::string(p.key) == "link_ns_per_byte") s = with_link(s, p.value);
  return s;
}

// Identifiability: what Figure 9 leaves open around the machine's values. (1) The split of the
// per-message overheads along C_send + C_recv = constant; (2) each parameter scaled alone, the
// others held (a slice, not a profile: re-optimizing the others could only widen the range). A
// value is "left open" when its loss is within `slack` (relative) of the smallest loss seen.
int identify(const MachineSpec& base, const Table& paper, const std::vector<std::size_t>& sizes, int jobs,
             double slack) {
  const Machine m0 = build_machine(base);
  const auto ps0 = fit_params_of(m0);
  const double sum = ps0[0].value + ps0[1].value;
  fmt::print("Identifiability on {} from Figure 9 (cells of sizes", base.text());
  for (auto s : sizes) fmt::print(" {}", s);
  fmt::print("); a value is left open when its loss <= (1 + {}) x the smallest loss of its scan\n\n", slack);
  auto report = [&](const char* what, const std::vector<std::pair<double, double>>& scan, const char* unit) {
    double best = INFINITY;
    for (const auto& [v, l] : scan) best = std::min(best, l);
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& [v, l] : scan)
      if (l <= best * (1 + slack)) lo = std::min(lo, v), hi = std::max(hi, v);
    fmt::print("{:<20}", what);
    for (const auto& [v, l] : scan) fmt::print(" {:>9.4g}:{:.4f}", v, l);
    fmt::print("\n{:<20} left open: {:.4g} .. {:.4g} {}{}\n", "", lo, hi, unit,
               lo == scan.front().first || hi == scan.back().first ? " (reaches the end of the scan)" : "");
    std::fflush(stdout);
  };
  {
    std::vector<std::pair<double, double>> scan;
    for (double f : {0.0, 0.25, 0.5, 0.6, 0.75, ps0[0].value / sum, 0.95, 1.0}) {
      auto ps = ps0;
      ps[0].value = f * sum, ps[1].value = (1 - f) * sum;
      scan.emplace_back(ps[0].value, fig9_loss(spec_with_link(base, ps), paper, sizes, jobs));
    }
    std::sort(scan.begin(), scan.end());
    fmt::print("C_send along C_send + C_recv = {:.2f} us (value:loss)\n", sum);
    report("send_us", scan, "us");
  }
  fmt::print("\nEach parameter scaled alone (value:loss)\n");
  for (std::size_t i = 0; i < ps0.size(); ++i) {
    if (ps0[i].value <= 0) continue;
    std::vector<std::pair<double, double>> scan;
    for (double f : {0.5, 0.71, 1.0, 1.41, 2.0}) {
      auto ps = ps0;
      ps[i].value *= f;
      scan.emplace_back(ps[i].value, fig9_loss(spec_with_link(base, ps), paper, sizes, jobs));
    }
    report(ps0[i].key, scan, "");
  }
  return 0;
}

int fit(const MachineSpec& base, const Table& paper, const std::vector<std::size_t>& sizes, int jobs, int rounds,
        const std::vector<std::string>& only) {
  // Starts from the preset's values; injection and ejection channels keep the link's byte time.
  const Machine m0 = build_machine(base);
  const std::vector<Param> all = fit_params_of(m0);
  // The parameters varied: all of them, or those named by --params. A parameter at 0 stays there
  // (the search is multiplicative), so a new one needs a starting value in --machine.
  std::vector<Param> ps;
  for (const auto& p : all)
    if (p.value > 0 && (only.empty() || std::find(only.begin(), only.end(), p.key) != only.end())) ps.push_back(p);
  for (const auto& k : only)
    if (std::none_of(ps.begin(), ps.end(), [&](const Param& p) { return k == p.key; }))
      throw UsageError(fmt::format("fit: '{}' is not a fitted parameter, or it is 0 on {}", k, base.text()));
  const auto link = std::find_if(ps.begin(), ps.end(), [](const Param& p) { return std::string(p.key) == "link_ns_per_byte"; });
  const auto link_index = link == ps.end() ? ps.size() : static_cast<std::size_t>(link - ps.begin());
  const double link0 = static_cast<double>(m0.net.link_byte_time) / 1e3;
  auto loss = [&](const std::vector<Param>& cand) {
    const double link_now = link_index < cand.size() ? cand[link_index].value : link0;
    return fig9_loss(with_link(spec_of(base, cand), link_now), paper, sizes, jobs);
  };
  double best = loss(ps);
  fmt::print("start: loss {:.4f}  {}\n", best, spec_of(base, ps).text());
  for (double step : {2.0, 1.41421356, 1.18920712, 1.09050773}) {
    for (int r = 0; r < rounds; ++r) {
      bool improved = false;
      for (std::size_t i = 0; i < ps.size(); ++i) {
        for (double f : {step, 1 / step}) {
          auto cand = ps;
          cand[i].value *= f;
          const double l = loss(cand);
          if (l < best) {
            best = l;
            ps = cand;
            improved = true;
            fmt::print("step {:.3f}: loss {:.4f}  {}\n", step, best, spec_of(base, ps).text());
            std::fflush(stdout);
            break;
          }
        }
      }
      if (!improved) break;
    }
  }
  fmt::print("best: loss {:.4f} (mean squared log ratio; rms factor {:.3f})\n{}\n", best, std::exp(std::sqrt(best)),
             spec_of(base, ps).text());
  return 0;
}

// ---- The claims table (`paper000 claims`) --------------------------------------------------------

// The machines the claims run on, by their names in the paper's figures: the Delta of Figures 2 to 9,
// and the smaller meshes of Figures 10 and 11.
const std::string kDelta = "delta:16x16";
const std::vector<std::string> kSmallDeltas = {"delta:4x4", "delta:4x8", "delta:8x8", "delta:8x16"};

// One emulated run: machine, algorithm, size -> ms and the root's message set-ups.
struct Measure {
  std::string machine, algorithm;
  std::size_t size;
  double ms = NAN;
  std::uint64_t root_sends = 0;
  std::string error;
};

// The runs of the claims, on delta machines named as in the paper, each with `options` added.
class Measurements {
 public:
  explicit Measurements(std::vector<MachineOption> options) : options_(std::move(options)) {}
  void want(const std::string& machine, const std::string& alg, std::size_t size) {
    if (!index_.count(key(machine, alg, size))) {
      index_[key(machine, alg, size)] = runs_.size();
      runs_.push_back(Measure{machine, alg, size, NAN, 0, {}});
    }
  }
  void run_all(int jobs) {
    for (const auto& r : runs_)
      if (!machines_.count(r.machine)) {
        MachineSpec spec = MachineSpec::parse(r.machine);
        spec.options = options_;
        machines_.emplace(r.machine, build_machine(spec));
      }
    std::vector<experiment::Job> jobs_of_runs;
    for (const auto& r : runs_) {
      experiment::Job j{
          &machines_.at(r.machine), &algorithms::find(r.algorithm), algorithms::Args{r.size, 0, false}, {}};
      j.options.phantom_payloads = true;  // the same times as with payloads (docs/model.md), much faster
      jobs_of_runs.push_back(std::move(j));
    }
    const auto outcomes = experiment::run_jobs(jobs_of_runs, {.parallel = jobs});
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      if (!outcomes[i].record) {
        runs_[i].error = outcomes[i].error;
        continue;
      }
      runs_[i].ms = to_us(outcomes[i].record->result.makespan) / 1e3;
      runs_[i].root_sends = outcomes[i].record->result.sent.at(0);
    }
    for (const auto& r : runs_)
      if (!r.error.empty())
        throw std::runtime_error(fmt::format("{} on {}, {} B: {}", r.algorithm, r.machine, r.size, r.error));
  }
  const Measure& at(const std::string& machine, const std::string& alg, std::size_t size) const {
    return runs_.at(index_.at(key(machine, alg, size)));
  }
  double ms(const std::string& machine, const std::string& alg, std::size_t size) const {
    return at(machine, alg, size).ms;
  }
  int nodes(const std::string& machine) const { return machines_.at(machine).nodes(); }

 private:
  static std::string key(const std::string& m, const std::string& a, std::size_t s) {
    return m + "|" + a + "|" + std::to_string(s);
  }
  std::vector<MachineOption> options_;
  std::map<std::string, Machine> machines_;
  std::vector<Measure> runs_;
  std::map<std::string, std::size_t> index_;
};

// "scatter/logp-lev-rec(0.75)" -> "logp-lev-rec(0.75)".
std::string short_name(const std::string& a) { return a.substr(a.find('/') + 1); }

std::string list_sizes(const std::vector<std::size_t>& v) {
  if (v.empty()) return "none";
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// Thresholds for the paper's words (the paper gives none; the notes of the claims repeat them).
constexpr double kNumberTolerance = 1.10;  // a number is reproduced within 1.10x
constexpr double kClose = 1.25;            // "comparable", "a good choice": within 1.25x of the best;
                                           // "does not come close", "significantly worse": beyond it

// The algorithms of the claims. Figure 2's in this order: the fastest of a tie is the first listed.
const std::vector<std::string> kScatters = {"scatter/1-lev-dir",         "scatter/1-lev-our-br", "scatter/1-lev-sys-br",
                                            "scatter/2-lev-rec",         "scatter/3-lev-sq",     "scatter/logp-lev-sq",
                                            "scatter/logp-lev-rec(0.75)"};
const std::vector<std::string> kBestThree = {"scatter/2-lev-rec", "scatter/3-lev-sq", "scatter/logp-lev-rec(0.75)"};
const std::vector<std::string> kCombiningGathers = {"gather/2-lev-rec", "gather/3-lev-sq", "gather/logp-lev-sq",
                                                    "gather/logp-lev-rec(0.6)"};
const std::vector<std::string> kFig10 = {"alltoall/1-lev-dir", "alltoall/1-lev-xor", "alltoall/2-lev-c,r",
                                         "alltoall/2-lev-c,r-int", "alltoall/2-lev-sq"};
// Section 3.2's message set-ups at the source (Figure 5).
const std::vector<std::pair<std::string, int>> kFig5Setups = {{"scatter/logp-lev-sq", 8},
                                                              {"scatter/logp-lev-rec(0.75)", 15},
                                                              {"scatter/3-lev-sq", 21},
                                                              {"scatter/2-lev-rec", 30},
                                                              {"scatter/1-lev-dir", 255}};

// The paper did not run 1-lev-sys-br from 4 KB up.
bool paper_ran(const std::string& scatter, std::size_t s) { return scatter != "scatter/1-lev-sys-br" || s < 4096; }
bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The runs every row reads.
void want_runs(Measurements& r) {
  for (auto s : kSizes) {
    for (const auto& a : kScatters)
      if (paper_ran(a, s)) r.want(kDelta, a, s);
    r.want(kDelta, "scatter/logp-lev-rec(0.5)", s);
    for (const auto& a : kFig6) r.want(kDelta, a, s);
    r.want(kDelta, "gather/logp-lev-rec(0.65)", s);
    for (const auto& [pname, oname] : kFig9) r.want(kDelta, oname, s);
  }
  for (const auto& m : kSmallDeltas)
    for (std::size_t s : {64, 4096})
      for (const auto& a : kFig10)
        if (a != "alltoall/2-lev-sq" || m == "delta:4x4" || m == "delta:8x8") r.want(m, a, s);  // it needs a square
  r.want("delta:8x8", "alltoall/1-lev-xor", 512), r.want("delta:8x8", "alltoall/2-lev-c,r", 512);
  r.want("delta:8x16", "alltoall/1-lev-xor", 128), r.want("delta:8x16", "alltoall/2-lev-c,r", 128);
}

// What the rows read: our runs, and Figure 9 as published.
struct Tables {
  const Measurements& runs;
  const Table& fig9;

  double ms(const std::string& alg, std::size_t s) const { return runs.ms(kDelta, alg, s); }
  double ms(const std::string& machine, const std::string& alg, std::size_t s) const {
    return runs.ms(machine, alg, s);
  }
  std::string fastest(const std::vector<std::string>& algs, std::size_t s, const std::string& machine = kDelta) const {
    return *std::min_element(algs.begin(), algs.end(),
                             [&](const auto& a, const auto& b) { return ms(machine, a, s) < ms(machine, b, s); });
  }
  // Figure 2's algorithms the paper ran at `s`.
  std::vector<std::string> scatters_ran(std::size_t s) const {
    std::vector<std::string> v;
    for (const auto& a : kScatters)
      if (paper_ran(a, s)) v.push_back(a);
    return v;
  }
  // Figure 9's algorithms (our names) that the paper has at `s`.
  std::vector<std::string> fig9_ran(std::size_t s) const {
    std::vector<std::string> v;
    for (const auto& [pname, oname] : kFig9)
      if (fig9.count(pname) && fig9.at(pname).count(s)) v.push_back(oname);
    return v;
  }
  // The ratio a / b farthest from 1 over the sizes ("about the same" statements), and its size.
  claims::Number worst_ratio(const std::string& a, const std::string& b) const {
    std::pair<double, std::size_t> worst{1, 0};
    for (auto s : kSizes) {
      const double q = ms(a, s) / ms(b, s);
      if (std::max(q, 1 / q) > worst.first) worst = {std::max(q, 1 / q), s};
    }
    return claims::Number(1.0, worst.first, worst.second ? fmt::format("worst at {} B", worst.second) : "");
  }
};

// A point of a family of claims: a message size, a machine of Figure 10, an algorithm of Figure 5
// or a row of Figure 9 (the paper's name). A single claim is measured at {tables} alone.
struct At {
  const Tables* t = nullptr;
  std::size_t size = 0;
  std::string machine = kDelta;
  std::string alg = "";
};
using Row = claims::Row<At>;

std::vector<std::size_t> sizes_where(const std::function<bool(std::size_t)>& keep) {
  std::vector<std::size_t> v;
  std::copy_if(kSizes.begin(), kSizes.end(), std::back_inserter(v), keep);
  return v;
}
std::vector<std::size_t> ascending(std::vector<std::size_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}
// The message sizes (in the paper's order) below, up to, from and above `n`.
std::vector<std::size_t> sizes_below(std::size_t n) {
  return sizes_where([=](std::size_t s) { return s < n; });
}
std::vector<std::size_t> sizes_up_to(std::size_t n) {
  return sizes_where([=](std::size_t s) { return s <= n; });
}
std::vector<std::size_t> sizes_from(std::size_t n) {
  return sizes_where([=](std::size_t s) { return s >= n; });
}
std::vector<std::size_t> sizes_above(std::size_t n) {
  return sizes_where([=](std::size_t s) { return s > n; });
}

// The measurement of a statement about each of `sizes`: it holds where `holds` does at every one;
// ours names the sizes where it does not, in the order of `sizes`.
std::function<claims::Statement(const At&)> at_each(std::vector<std::size_t> sizes,
                                                    std::function<bool(const At&, std::size_t)> holds) {
  return [sizes = std::move(sizes), holds = std::move(holds)](const At& a) {
    std::vector<std::size_t> bad;
    for (auto s : sizes)
      if (!holds(a, s)) bad.push_back(s);
    return claims::Statement("sizes where not: " + list_sizes(bad), bad.empty());
  };
}

// Section 3.2, Figure 5: message set-ups at the source on 256 processors, one per algorithm.
const std::vector<Row> kFig5Rows = {
    Row::number(
        "fig5.setups",
        "Sec. 3.2: 'logp-lev-sq experiences 8, logp-lev-rec(0.75) 15, 3-lev-sq 21, 2-lev-rec 30, 1-lev-dir 255 "
        "message set-ups'",
        [](const At& a) {
          const auto paper =
              std::find_if(kFig5Setups.begin(), kFig5Setups.end(), [&](const auto& p) { return p.first == a.alg; });
          return claims::Number(paper->second, static_cast<double>(a.t->runs.at(kDelta, a.alg, 16).root_sends));
        },
        1.0),
};

// Section 3.2, Figure 2 (one-to-all): the winner per size, large sizes (4 KB and up) and small.
const std::vector<Row> kFig2LargeWinner = {Row::statement(
    "fig2.winner", "Sec. 3.2: 'For large message sizes, Algorithm logp-lev-rec(0.75) is the best choice'",
    "logp-lev-rec(0.75)",
    [](const At& a) {
      const auto w = a.t->fastest(a.t->scatters_ran(a.size), a.size);
      return claims::Statement(fmt::format("{} ({:.2f} ms; logp-lev-rec(0.75) {:.2f})", short_name(w),
                                           a.t->ms(w, a.size), a.t->ms("scatter/logp-lev-rec(0.75)", a.size)),
                               w == "scatter/logp-lev-rec(0.75)");
    },
    "large = 4 KB and up, where 1-lev-dir becomes 'a reasonable choice'")};
const std::vector<Row> kFig2SmallWinner = {Row::statement(
    "fig2.winner",
    "Sec. 3.2: 'Of all the algorithms, 2-lev-rec, 3-lev-sq and logp-lev-rec(0.75) perform the best. This holds for "
    "all message and machine sizes'",
    "one of 2-lev-rec, 3-lev-sq, logp-lev-rec(0.75)", [](const At& a) {
      const auto w = a.t->fastest(a.t->scatters_ran(a.size), a.size);
      return claims::Statement(fmt::format("{} ({:.2f} ms)", short_name(w), a.t->ms(w, a.size)),
                               contains(kBestThree, w));
    })};

// Section 3.2, Figure 2's statements over all sizes.
const std::vector<Row> kFig2Rows = {
    Row::statement(
        "fig2.best-three",
        "Sec. 3.2: 'Of all the algorithms, 2-lev-rec, 3-lev-sq and logp-lev-rec(0.75) perform the best. This holds "
        "for all message ... sizes'",
        "each of the three faster than every other algorithm, at every size",
        at_each(kSizes,
                [](const At& a, std::size_t s) {
                  double worst3 = 0, best_other = INFINITY;
                  for (const auto& b : kBestThree) worst3 = std::max(worst3, a.t->ms(b, s));
                  for (const auto& o : a.t->scatters_ran(s))
                    if (!contains(kBestThree, o)) best_other = std::min(best_other, a.t->ms(o, s));
                  return worst3 < best_other;
                })),
    Row::statement(
        "fig2.broadcasts-worst",
        "Sec. 3.2: 'The two broadcasting algorithms ... give the worst performance of all algorithms, with the "
        "system's broadcast performing significantly worse than our own broadcast'",
        "sys-br > 1.25 x our-br > every other, 16..2048 B",
        at_each(sizes_below(4096),
                [](const At& a, std::size_t s) {
                  double others = 0;
                  for (const auto& o : kScatters)
                    if (o != "scatter/1-lev-sys-br" && o != "scatter/1-lev-our-br")
                      others = std::max(others, a.t->ms(o, s));
                  const double sys = a.t->ms("scatter/1-lev-sys-br", s), ours = a.t->ms("scatter/1-lev-our-br", s);
                  return sys > kClose * ours && ours > others;
                }),
        "'significantly' read as more than 1.25x; sys-br was not run from 4 KB up"),
    Row::number(
        "fig2.1-lev-dir.flat-to-482",
        "Sec. 3.2: 'sending messages of size <= 482 bytes costs approximately the same' (1-lev-dir, 256 B "
        "over 16 B)",
        [](const At& a) {
          return claims::Number(1.0, a.t->ms("scatter/1-lev-dir", 256) / a.t->ms("scatter/1-lev-dir", 16));
        },
        kNumberTolerance),
    Row::statement("fig2.combining-small",
                   "Sec. 3.2: 'the message-combining algorithms (excluding the broadcasting algorithms) perform well "
                   "for small message sizes; i.e., when L <= 256 bytes'",
                   "all four faster than 1-lev-dir, L <= 256",
                   at_each(sizes_up_to(256),
                           [](const At& a, std::size_t s) {
                             for (const auto& c : {"scatter/2-lev-rec", "scatter/3-lev-sq", "scatter/logp-lev-sq",
                                                   "scatter/logp-lev-rec(0.75)"})
                               if (!(a.t->ms(c, s) < a.t->ms("scatter/1-lev-dir", s))) return false;
                             return true;
                           })),
    Row::statement("fig2.1-lev-dir-only-large",
                   "Sec. 3.2: '1-lev-dir is a reasonable choice only for large message sizes (at least 4 Kbytes)'",
                   "1-lev-dir more than 1.25x the best below 4 KB",
                   at_each(sizes_below(4096),
                           [](const At& a, std::size_t s) {
                             return a.t->ms("scatter/1-lev-dir", s) > kClose * a.t->ms(a.t->fastest(kScatters, s), s);
                           }),
                   "'not reasonable' read as more than 1.25x the best"),
    Row::statement("fig4.gap-narrows",
                   "Sec. 3.2 (Fig. 4): 'In comparison to Algorithm 1-lev-dir, these algorithms perform well for "
                   "small messages size while the performance gap narrows for messages of size 4 Kbytes'",
                   "1-lev-dir / best of the three smaller at 4096 than at 256",
                   [](const At& a) {
                     const auto gap = [&](std::size_t s) {
                       double b = INFINITY;
                       for (const auto& x : kBestThree) b = std::min(b, a.t->ms(x, s));
                       return a.t->ms("scatter/1-lev-dir", s) / b;
                     };
                     return claims::Statement(fmt::format("{:.2f} at 4096, {:.2f} at 256", gap(4096), gap(256)),
                                              gap(4096) < gap(256));
                   }),
    Row::number(
        "fig2.logp-lev-sq=rec(0.5)",
        "Sec. 3.2: 'Algorithm logp-lev-sq and Algorithm logp-lev-rec(0.5) give about the same performance' "
        "(worst ratio over sizes)",
        [](const At& a) { return a.t->worst_ratio("scatter/logp-lev-sq", "scatter/logp-lev-rec(0.5)"); },
        kNumberTolerance),
};

// Section 4.1, Figure 6 (all-to-one): the winner above 512 B, the combining algorithms comparable up to it.
const std::vector<Row> kFig6LargeWinner = {Row::statement(
    "fig6.winner", "Sec. 4.1: 'for L > 512 Algorithm logp-lev-rec(0.60) gives the best performance'",
    "logp-lev-rec(0.6)", [](const At& a) {
      const auto w = a.t->fastest(kFig6, a.size);
      return claims::Statement(fmt::format("{} ({:.2f} ms; logp-lev-rec(0.6) {:.2f})", short_name(w),
                                           a.t->ms(w, a.size), a.t->ms("gather/logp-lev-rec(0.6)", a.size)),
                               w == "gather/logp-lev-rec(0.6)");
    })};
const std::vector<Row> kFig6SmallComparable = {Row::statement(
    "fig6.comparable", "Sec. 4.1: 'all algorithms that combine messages give a comparable performance for L <= 512'",
    "slowest combining <= 1.25 x fastest",
    [](const At& a) {
      const auto w = a.t->fastest(kFig6, a.size);
      double lo = INFINITY, hi = 0;
      for (const auto& c : kCombiningGathers)
        lo = std::min(lo, a.t->ms(c, a.size)), hi = std::max(hi, a.t->ms(c, a.size));
      return claims::Statement(fmt::format("{} ({:.2f} ms) .. {:.2f} ms: {:.2f}x", short_name(w), lo, hi, hi / lo),
                               hi <= kClose * lo);
    },
    "'comparable' read as within 1.25x")};

// Both of gamma's ranges of section 4.1: rec(0.65) / rec(0.6) at size `s`.
double gamma_ratio(const At& a, std::size_t s) {
  return a.t->ms("gather/logp-lev-rec(0.65)", s) / a.t->ms("gather/logp-lev-rec(0.6)", s);
}
// Section 4.1's comparison of the all-to-one algorithms with their one-to-all counterparts.
bool gathers_vs_scatters(const At& a, std::size_t s, bool gather_faster) {
  for (const std::string x : {"1-lev-dir", "2-lev-rec", "3-lev-sq"}) {
    const double g = a.t->ms("gather/" + x, s), sc = a.t->ms("scatter/" + x, s);
    if (gather_faster ? !(g < sc) : !(g > kClose * sc)) return false;
  }
  return true;
}

// Section 4.1, Figure 6's statements over all sizes.
const std::vector<Row> kFig6Rows = {
    Row::statement("fig6.1-lev-dir-not-close",
                   "Sec. 4.1: 'for all machine and all message sizes we considered, the performance of Algorithm "
                   "1-lev-dir does not come close to that of the better performing algorithms'",
                   "1-lev-dir more than 1.25x the best, every size",
                   at_each(kSizes,
                           [](const At& a, std::size_t s) {
                             return a.t->ms("gather/1-lev-dir", s) >
                                    kClose * a.t->ms(a.t->fastest(kCombiningGathers, s), s);
                           }),
                   "'not close' read as more than 1.25x"),
    Row::statement("fig6.2-lev-rec-good",
                   "Sec. 4.1: 'Overall, for all message and all machine sizes we considered, Algorithm 2-lev-rec is a "
                   "good choice'",
                   "2-lev-rec within 1.25x of the best, every size",
                   at_each(kSizes,
                           [](const At& a, std::size_t s) {
                             return a.t->ms("gather/2-lev-rec", s) <= kClose * a.t->ms(a.t->fastest(kFig6, s), s);
                           }),
                   "'good choice' read as within 1.25x"),
    Row::number(
        "fig6.2-lev-rec.1024-to-2048",
        "Sec. 4.1: 'for Algorithm 2-lev-rec the table shows a 3-fold increase in time when the message size "
        "doubles from 1024 to 2048'",
        [](const At& a) {
          return claims::Number(3.0, a.t->ms("gather/2-lev-rec", 2048) / a.t->ms("gather/2-lev-rec", 1024));
        },
        kNumberTolerance, "", "the paper: 'it appears that some system limits are being exceeded'"),
    Row::statement("fig6.gamma-0.65-small", "Sec. 4.1: 'gamma = 0.65 performing better for L <= 2048 bytes'",
                   "rec(0.65) < rec(0.6) for L <= 2048",
                   at_each(sizes_up_to(2048), [](const At& a, std::size_t s) { return gamma_ratio(a, s) < 1; })),
    Row::statement("fig6.gamma-0.60-large", "Sec. 4.1: 'gamma = 0.60 performing better for L > 2048 bytes'",
                   "rec(0.6) < rec(0.65) for L > 2048",
                   at_each(sizes_above(2048), [](const At& a, std::size_t s) { return gamma_ratio(a, s) > 1; })),
    Row::number(
        "fig6.gamma-0.65-large-cost",
        "Sec. 4.1: 'Using gamma = 0.65 for large messages increased the time by about 40%' (mean of "
        "rec(0.65)/rec(0.6) over 4..16 KB)",
        [](const At& a) {
          const auto large = sizes_above(2048);
          double sum = 0;
          for (auto s : large) sum += gamma_ratio(a, s);
          return claims::Number(1.40, sum / static_cast<double>(large.size()));
        },
        kNumberTolerance),
    Row::statement("fig6-vs-2.small",
                   "Sec. 4.1: 'for messages of length < 512 bytes the all-to-one algorithms are slightly faster than "
                   "their one-to-all counterpart'",
                   "gather < scatter for 1-lev-dir, 2-lev-rec, 3-lev-sq, L < 512",
                   at_each(ascending(sizes_below(512)),
                           [](const At& a, std::size_t s) { return gathers_vs_scatters(a, s, true); })),
    Row::statement("fig6-vs-2.large",
                   "Sec. 4.1: 'while for messages of length >= 512 bytes the all-to-one algorithms are significantly "
                   "slower'",
                   "gather > 1.25 x scatter for 1-lev-dir, 2-lev-rec, 3-lev-sq, L >= 512",
                   at_each(ascending(sizes_from(512)),
                           [](const At& a, std::size_t s) { return gathers_vs_scatters(a, s, false); }),
                   "'significantly' read as more than 1.25x"),
    Row::number(
        "fig6-vs-2.logp-lev-sq",
        "Sec. 4.1: 'one would expect Algorithm logp-lev-sq to exhibit a similar performance for one-to-all "
        "and all-to-one. Our results for the Delta support this' (worst ratio over sizes)",
        [](const At& a) { return a.t->worst_ratio("gather/logp-lev-sq", "scatter/logp-lev-sq"); }, kNumberTolerance),
};

// Section 5.3, Figure 9 (all-to-all): every cell the paper has, and the winner at every size.
const std::vector<Row> kFig9Cells = {Row::number(
    "fig9", "Fig. 9 (ms)",
    [](const At& a) {
      const auto& ours =
          std::find_if(kFig9.begin(), kFig9.end(), [&](const auto& p) { return p.first == a.alg; })->second;
      return claims::Number(a.t->fig9.at(a.alg).at(a.size), a.t->ms(ours, a.size));
    },
    kNumberTolerance, "ms")};
const std::vector<Row> kFig9Winner = {Row::number(
    "fig9.winner", "Fig. 9: the paper's time of our fastest algorithm against the paper's fastest (ms)",
    [](const At& a) {
      std::string ours_w, paper_w;
      double ours_t = INFINITY, paper_t = INFINITY;
      for (const auto& [pname, oname] : kFig9) {
        auto pr = a.t->fig9.find(pname);
        if (pr == a.t->fig9.end() || !pr->second.count(a.size)) continue;
        if (a.t->ms(oname, a.size) < ours_t) ours_t = a.t->ms(oname, a.size), ours_w = pname;
        if (pr->second.at(a.size) < paper_t) paper_t = pr->second.at(a.size), paper_w = pname;
      }
      return claims::Number(paper_t, a.t->fig9.at(ours_w).at(a.size),
                            fmt::format("paper's winner {}, ours {}", paper_w, ours_w));
    },
    kNumberTolerance, "ms")};

// Section 5.3's statements on Figure 9, over the algorithms the paper has at each size.
const std::vector<Row> kFig9Text = {
    Row::statement(
        "fig9.text.xor-large",
        "Sec. 5.3: 'Algorithm 1-lev-xor gives the best performance for larger message sizes; i.e., L >= 256'",
        "1-lev-xor fastest, L >= 256",
        at_each(sizes_from(256),
                [](const At& a, std::size_t s) { return a.t->fastest(a.t->fig9_ran(s), s) == "alltoall/1-lev-xor"; }),
        "the paper's own Fig. 9 has 1-lev-balance fastest at 256 and 512"),
    Row::statement(
        "fig9.text.c,r-small",
        "Sec. 5.3: 'For small messages sizes (i.e., L <= 256), Algorithm 2-lev-c,r achieved the best "
        "performance'",
        "2-lev-c,r fastest, L <= 256",
        at_each(sizes_up_to(256),
                [](const At& a, std::size_t s) { return a.t->fastest(a.t->fig9_ran(s), s) == "alltoall/2-lev-c,r"; }),
        "the paper's own Fig. 9 has 1-lev-balance fastest at 256"),
    Row::statement("fig9.text.lin-worse-than-xor",
                   "Sec. 5.3: 'Algorithm 1-lev-lin did consistently worse than 1-lev-xor'", "lin > xor at every size",
                   at_each(kSizes,
                           [](const At& a, std::size_t s) {
                             return a.t->ms("alltoall/1-lev-lin", s) > a.t->ms("alltoall/1-lev-xor", s);
                           })),
    Row::statement("fig9.text.sq-second-small",
                   "Sec. 5.3: 'Algorithm 2-lev-sq gave the second best performance for small message sizes'",
                   "2-lev-sq second, 16..128 B (as in Fig. 9)",
                   at_each(sizes_up_to(128),
                           [](const At& a, std::size_t s) {
                             std::vector<double> times;
                             for (const auto& x : a.t->fig9_ran(s)) times.push_back(a.t->ms(x, s));
                             std::sort(times.begin(), times.end());
                             return a.t->ms("alltoall/2-lev-sq", s) == times[1];
                           })),
    Row::statement("fig9.text.c,r-int-large",
                   "Sec. 5.3: '2-lev-c,r-int outperforms 2-lev-c,r only for larger machine sizes (p >= 64) and larger "
                   "message sizes (L >= 1024 bytes)'",
                   "on 256 processors c,r-int < c,r exactly when L >= 1024",
                   at_each(kSizes,
                           [](const At& a, std::size_t s) {
                             return (a.t->ms("alltoall/2-lev-c,r-int", s) < a.t->ms("alltoall/2-lev-c,r", s)) ==
                                    (s >= 1024);
                           })),
};

// Figure 10's five algorithms on a machine (2-lev-sq needs a square one).
std::vector<std::string> fig10_on(const std::string& m) {
  auto five = kFig10;
  if (m == "delta:4x8" || m == "delta:8x16") std::erase(five, "alltoall/2-lev-sq");
  return five;
}

// Figure 10 (64 B and 4 KB over machine sizes): the statements that hold "for all machine sizes".
const std::vector<Row> kFig10Rows = {
    Row::statement("winner.64",
                   "Sec. 5.3: '2-lev-c,r achieved the best performance [small L] ... This conclusion holds ... for all "
                   "machine sizes we considered' (Fig. 10's five)",
                   "2-lev-c,r",
                   [](const At& a) {
                     const auto w = a.t->fastest(fig10_on(a.machine), 64, a.machine);
                     return claims::Statement(short_name(w), w == "alltoall/2-lev-c,r");
                   }),
    Row::statement("winner.4096",
                   "Sec. 5.3: '1-lev-xor gives the best performance for larger message sizes ... for all machine sizes "
                   "we considered' (Fig. 10's five)",
                   "1-lev-xor",
                   [](const At& a) {
                     const auto w = a.t->fastest(fig10_on(a.machine), 4096, a.machine);
                     return claims::Statement(short_name(w), w == "alltoall/1-lev-xor");
                   }),
    // The paper's ordering depends on the machine: it sets the point's own.
    Row::statement("c,r-int.4096",
                   "Sec. 5.3: '2-lev-c,r-int outperforms 2-lev-c,r only for larger machine sizes (p >= 64) and larger "
                   "message sizes (L >= 1024 bytes)'",
                   "",
                   [](const At& a) {
                     const bool large = a.t->runs.nodes(a.machine) >= 64;
                     const double cr_int = a.t->ms(a.machine, "alltoall/2-lev-c,r-int", 4096),
                                  cr = a.t->ms(a.machine, "alltoall/2-lev-c,r", 4096);
                     return claims::Statement(fmt::format("c,r-int {:.1f} ms, c,r {:.1f} ms", cr_int, cr),
                                              (cr_int < cr) == large, "", large ? "c,r-int < c,r" : "c,r-int >= c,r");
                   }),
};

// Figure 11 (2 MB in all over machine sizes): where the switch away from combining occurs.
const std::vector<Row> kFig11Rows = {
    Row::statement("fig11.64-procs.512",
                   "Sec. 5.3 (Fig. 11, 2 MB in all): 'the switch away from an algorithm that combines messages occurs "
                   "when a 64-processor machine sends messages of size 512 bytes'",
                   "8x8, 512 B: 1-lev-xor < 2-lev-c,r",
                   [](const At& a) {
                     const double x = a.t->ms("delta:8x8", "alltoall/1-lev-xor", 512),
                                  cr = a.t->ms("delta:8x8", "alltoall/2-lev-c,r", 512);
                     return claims::Statement(fmt::format("xor {:.1f} ms, c,r {:.1f} ms", x, cr), x < cr);
                   }),
    Row::statement("fig11.128-procs.128",
                   "Sec. 5.3 (Fig. 11, 2 MB in all): combining still wins on 128 processors (128 B each)",
                   "8x16, 128 B: 2-lev-c,r < 1-lev-xor",
                   [](const At& a) {
                     const double cr = a.t->ms("delta:8x16", "alltoall/2-lev-c,r", 128),
                                  x = a.t->ms("delta:8x16", "alltoall/1-lev-xor", 128);
                     return claims::Statement(fmt::format("c,r {:.1f} ms, xor {:.1f} ms", cr, x), cr < x);
                   }),
};

// Every claim of the paper that the emulator can test, on delta machines with the options of
// `delta` (the 16x16 one) added: the ledger `paper000 claims` prints and `paper000 calibrate` scores.
claims::Ledger delta_claims(const MachineSpec& delta, const Table& fig9, int jobs) {
  Measurements runs(delta.options);
  want_runs(runs);
  runs.run_all(jobs);
  const Tables t{runs, fig9};

  const auto at_size = [&](const std::vector<std::size_t>& sizes) {
    std::vector<At> v;
    for (auto s : sizes) v.push_back(At{&t, s});
    return v;
  };
  const auto by_size = [](const At& a) { return std::to_string(a.size); };
  const auto once = [](const At&) { return std::string(); };
  const std::vector<At> whole = {At{&t}};
  std::vector<At> setups, cells;
  for (const auto& [alg, n] : kFig5Setups) setups.push_back(At{&t, 0, kDelta, alg});
  for (const auto& [pname, oname] : kFig9)
    if (fig9.count(pname))
      for (auto s : kSizes)
        if (fig9.at(pname).count(s)) cells.push_back(At{&t, s, kDelta, pname});

  claims::Ledger L;
  claims::add_rows(L, kFig5Rows, setups, [](const At& a) { return short_name(a.alg); });
  claims::add_rows(L, kFig2LargeWinner, at_size(sizes_from(4096)), by_size);
  claims::add_rows(L, kFig2SmallWinner, at_size(sizes_below(4096)), by_size);
  claims::add_rows(L, kFig2Rows, whole, once);
  claims::add_rows(L, kFig6LargeWinner, at_size(sizes_above(512)), by_size);
  claims::add_rows(L, kFig6SmallComparable, at_size(sizes_up_to(512)), by_size);
  claims::add_rows(L, kFig6Rows, whole, once);
  claims::add_rows(L, kFig9Cells, cells, [](const At& a) { return fmt::format("{}.{}", a.alg, a.size); });
  claims::add_rows(L, kFig9Winner, at_size(kSizes), by_size);
  claims::add_rows(L, kFig9Text, whole, once);
  for (const auto& m : kSmallDeltas) claims::add_rows(L, kFig10Rows, {At{&t, 0, m}}, once, "fig10." + m + ".");
  claims::add_rows(L, kFig11Rows, whole, once);
  return L;
}

// The delta preset with `options` added, written as `--options` takes them: ",recv_us=40" (the
// leading comma may be left out).
MachineSpec delta_with(const std::string& options) {
  MachineSpec spec = MachineSpec::parse(kDelta);
  const std::string list = options.starts_with(',') ? options.substr(1) : options;
  if (!list.empty()) spec.add_options(list);
  return spec;
}

// The claims on the delta machines with `options`, each measured again at the ends of the ranges
// the paper leaves open (touchstone::open_variants) unless `preset_only`: a claim that flips there
// is undecided.
int print_claims(const std::string& options, const Table& fig9, int jobs, claims::Format format, bool preset_only) {
  const MachineSpec delta = delta_with(options);
  claims::Ledger L = delta_claims(delta, fig9, jobs);
  const auto open = preset_only ? std::vector<OpenVariant>{} : open_variants(delta);
  for (const auto& v : open) {
    MachineSpec variant = delta;
    variant.add_options(v.options);
    bench::weigh(L, delta_claims(variant, fig9, jobs), v);
  }
  if (format == claims::Format::text)
    fmt::print(
        "Paper 000 claims on delta (machine options '{}'); numbers within {:.2f}x count as reproduced{}\n\n", options,
        kNumberTolerance,
        open.empty() ? "" : fmt::format("; {} open variants, a claim that flips on one is undecided", open.size()));
  L.print(stdout, format);
  return 0;
}

// ---- Calibration against every claim (`paper000 calibrate`) --------------------------------------

// One point of a scan: the parameter (or relation) it moves, its value, and the machine options
// that put it there, added to the preset's.
struct Variant {
  std::string group;
  double value;
  std::vector<MachineOption> options;
};

// key=value, the value as the scans write it.
MachineOption option(const std::string& key, double value) { return {key, fmt::format("{:.6g}", value)}; }

// The default scans around the preset `m0`: the C_send/C_recv split along Figure 9's sum, the
// network-interface set-up inside the window section 3.2's text allows, and every fitted cost alone
// by a factor (link time by +-10%: Figure 9 pins it to a few percent). `groups` (empty: all)
// selects by group name.
// The bytes a blocked worm may drain into at a switch input: 0 unless the machine cuts through.
double router_buffer_of(const Machine& m) {
  return m.net.switching == Switching::cut_through ? static_cast<double>(m.net.router_buffer) : 0.0;
}

std::vector<Variant> default_variants(const Machine& m0, const std::vector<std::string>& groups) {
  const auto ps = fit_params_of(m0);
  const double send = ps[0].value, sum = ps[0].value + ps[1].value;
  const double ni = to_us(m0.costs.ni_setup), tail = to_us(m0.costs.send_tail);
  std::vector<Variant> v;
  // The interface set-up and the send's tail are parts of C_send (docs/model.md 2.17, 2.19): where a
  // scan leaves C_send c and the set-up x, the tail shrinks to what is left, X + T <= C_send. A
  // preset on the ridge X + T = C_send (the whole set-up is the interface's part, then the
  // bookkeeping: docs/paper000.md, "Identifiability") stays on it: the tail takes what the set-up leaves, T = c - x.
  const bool ridge = std::fabs(ni + tail - send) < 1e-9;
  auto tail_within = [&](double c, double x) {
    const double t = ridge ? c - x : std::min(tail, c - x);
    return t == tail ? std::vector<MachineOption>{} : std::vector<MachineOption>{option("send_tail_us", t)};
  };
  auto then = [](std::vector<MachineOption> a, const std::vector<MachineOption>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  // The set-up follows C_send down. 117 us is just above section 4.1's bound (C_send > C_recv);
  // 130..160 us brackets the plateau of the joint scan (130..150 us); sum - C_recv / 2 halves C_recv.
  for (double c : {60.0, 117.0, 130.0, 150.0, 160.0, sum - ps[1].value / 2, sum}) {
    if (std::fabs(c - send) < 1e-9) continue;
    const double x = std::min(ni, c);
    v.push_back(
        {"send_us (C_send + C_recv held)", c,
         then({option("send_us", c), option("recv_us", sum - c), option("ni_setup_us", x)}, tail_within(c, x))});
  }
  for (double x : {100.0, 110.0, 125.0, 135.0, 150.0, 175.0, 200.0})
    if (std::fabs(x - ni) > 1e-9 && x <= send)
      v.push_back({"ni_setup_us", x, then({option("ni_setup_us", x)}, tail_within(send, x))});
  // The send's tail, inside what the interface set-up leaves of C_send.
  for (double t : {0.0, 12.5, 25.0, 37.5, 50.0})
    if (std::fabs(t - tail) > 1e-9 && t + ni <= send + 1e-9)
      v.push_back({"send_tail_us", t, {option("send_tail_us", t)}});
  // Router buffers (docs/model.md 2.9): 0 is wormhole without buffers; 60 bytes is the smallest that
  // holds the second packet of a 512-byte message (30 data + 30 header bytes), 512 a whole packet.
  const double buffer = router_buffer_of(m0);
  for (double b : {0.0, 60.0, 96.0, 128.0, 160.0, 224.0, 320.0, 512.0})
    if (std::fabs(b - buffer) > 1e-9)
      v.push_back({"router_buffer", b,
                   b == 0 ? std::vector<MachineOption>{{"switching", "wormhole"}}
                          : std::vector<MachineOption>{{"switching", "cut-through"}, option("router_buffer", b)}});
  for (std::size_t i = 1; i < ps.size(); ++i) {
    if (ps[i].value <= 0) continue;
    const std::string key = ps[i].key;
    const bool link = key == "link_ns_per_byte";
    const std::vector<double> factors = link ? std::vector<double>{0.9, 1.1} : std::vector<double>{0.71, 1.41};
    for (double f : factors) {
      const double x = ps[i].value * f;
      std::vector<MachineOption> o = {option(key, x)};
      if (link) o.push_back(option("inject_ns_per_byte", x)), o.push_back(option("eject_ns_per_byte", x));
      v.push_back({key, x, o});
    }
  }
  if (!groups.empty()) {
    std::erase_if(v, [&](const Variant& x) {
      return std::none_of(groups.begin(), groups.end(), [&](const std::string& g) { return x.group.rfind(g, 0) == 0; });
    });
    if (v.empty()) throw UsageError("calibrate: --groups selects no scan (groups: send_us, ni_setup_us, send_tail_us, router_buffer, or a fitted cost's key)");
  }
  return v;
}

// What one ledger says, in numbers: its verdict counts, the mean squared log ratio ours/paper over
// Figure 9's cells (the fit's loss, over all 88 cells), and over every numeric claim.
struct Score {
  int reproduced = 0, off = 0, ordering = 0;
  double fig9_loss = NAN, numbers_loss = NAN;
};

Score score_of(const claims::Ledger& L) {
  Score s{L.count(claims::Verdict::reproduced), L.count(claims::Verdict::off), L.count(claims::Verdict::ordering_differs)};
  double f9 = 0, all = 0;
  int n9 = 0, n = 0;
  for (const auto& c : L.claims()) {
    if (!(c.factor > 0) || !std::isfinite(c.factor)) continue;
    const double d = std::log(c.factor);
    all += d * d, ++n;
    if (c.source == "Fig. 9 (ms)") f9 += d * d, ++n9;
  }
  s.fig9_loss = n9 ? f9 / n9 : NAN;
  s.numbers_loss = n ? all / n : NAN;
  return s;
}

// The claims whose verdict differs between two ledgers of the same claims: "+id" reproduced only
// in `now`, "-id" only in `base`.
std::string verdict_changes(const claims::Ledger& base, const claims::Ledger& now) {
  std::string out;
  for (std::size_t i = 0; i < base.claims().size() && i < now.claims().size(); ++i) {
    const bool was = base.claims()[i].verdict == claims::Verdict::reproduced, is = now.claims()[i].verdict == claims::Verdict::reproduced;
    if (was != is) out += fmt::format("{}{}{}", out.empty() ? "" : " ", is ? "+" : "-", now.claims()[i].id);
  }
  return out.empty() ? "none" : out;
}

// Scores the preset and every variant against the whole claims table, then reports per scanned
// parameter the values the evidence leaves open: those whose reproduced count is within
// `count_slack` of the best of its scan (the preset included), and separately those whose Figure 9
// loss is within `loss_slack` (relative) of the smallest. One scan point is one `paper000 claims`.
int calibrate(const std::string& base_options, const Table& fig9, int jobs, const std::vector<std::string>& groups,
              int count_slack, double loss_slack) {
  const MachineSpec base = delta_with(base_options);
  const Machine m0 = build_machine(base);
  const auto variants = default_variants(m0, groups);
  fmt::print("Calibration of delta (options '{}') against every claim of `paper000 claims`: {} scan points + the preset\n",
             base_options, variants.size());
  fmt::print("R/O/D = reproduced / off / ordering differs; fig9 = mean squared log ratio over Figure 9's cells; "
             "numbers = the same over every numeric claim; changes: +reproduced only here, -only in the preset\n\n");
  const claims::Ledger L0 = delta_claims(base, fig9, jobs);
  const Score s0 = score_of(L0);
  fmt::print("preset: {}/{}/{}  fig9 {:.4f}  numbers {:.4f}\n", s0.reproduced, s0.off, s0.ordering, s0.fig9_loss, s0.numbers_loss);
  std::fflush(stdout);
  const auto ps0 = fit_params_of(m0);
  auto preset_value = [&](const std::string& group) {
    if (group.rfind("send_us", 0) == 0) return ps0[0].value;
    if (group == "ni_setup_us") return to_us(m0.costs.ni_setup);
    if (group == "send_tail_us") return to_us(m0.costs.send_tail);
    if (group == "router_buffer") return router_buffer_of(m0);
    for (const auto& p : ps0)
      if (group == p.key) return p.value;
    return static_cast<double>(NAN);
  };
  std::map<std::string, std::vector<std::pair<double, Score>>> scans;
  std::vector<std::string> order;
  for (const auto& v : variants) {
    MachineSpec spec = base;
    spec.options.insert(spec.options.end(), v.options.begin(), v.options.end());
    const claims::Ledger L = delta_claims(spec, fig9, jobs);
    const Score s = score_of(L);
    fmt::print("{:<32} {:>9.4g}: {}/{}/{}  fig9 {:.4f}  numbers {:.4f}  changes: {}\n", v.group, v.value, s.reproduced, s.off,
               s.ordering, s.fig9_loss, s.numbers_loss, verdict_changes(L0, L));
    std::fflush(stdout);
    if (!scans.count(v.group)) order.push_back(v.group), scans[v.group].emplace_back(preset_value(v.group), s0);
    scans[v.group].emplace_back(v.value, s);
  }
  fmt::print("\nLeft open (values scanned, the preset's included; a range whose end is the scan's end may reach further):\n");
  for (const auto& g : order) {
    auto scan = scans.at(g);
    std::sort(scan.begin(), scan.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    int best = 0;
    double best_loss = INFINITY;
    for (const auto& [x, s] : scan) best = std::max(best, s.reproduced), best_loss = std::min(best_loss, s.fig9_loss);
    std::string by_count, by_loss;
    for (const auto& [x, s] : scan) {
      if (s.reproduced >= best - count_slack) by_count += fmt::format(" {:.4g}", x);
      if (s.fig9_loss <= best_loss * (1 + loss_slack)) by_loss += fmt::format(" {:.4g}", x);
    }
    fmt::print("{:<32} scanned {:.4g}..{:.4g}; claims (>= {} reproduced):{}; Figure 9 (loss <= {:.4f}):{}\n", g, scan.front().first,
               scan.back().first, best - count_slack, by_count, best_loss * (1 + loss_slack), by_loss);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Paper 000 on the emulated Intel Delta: reproductions of Figures 2, 6, 9 and the fit of the delta machine"};
  app.require_subcommand(1);
  std::string machine = "delta:16x16", reference = TOUCHSTONE_SOURCE_DIR "/bench/reference/delta_fig9_alltoall_256.csv";
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool markdown = false;
  std::vector<std::size_t> fit_sizes = {16, 256, 4096, 16384};
  int rounds = 3;
  std::vector<std::string> fit_params;
  std::string claims_format = "text", claims_options;
  double slack = 0.10;
  std::vector<std::string> calibrate_groups;
  int count_slack = 0;
  bool preset_only = false;
  for (auto* name : {"fig2", "fig6", "fig9", "fit", "claims", "identify", "calibrate"}) {
    const std::string n = name;
    auto* c = app.add_subcommand(name, n == "fit"        ? "fit the delta parameters to Figure 9"
                                       : n == "claims"   ? "the claims table: the paper's numbers and orderings beside ours"
                                       : n == "identify" ? "what Figure 9 leaves open: the C_send/C_recv split and each parameter alone"
                                       : n == "calibrate" ? "every claim scored over scans of the delta parameters: what the whole paper leaves open"
                                                         : std::string("reproduce Figure ") + (name + 3));
    if (n == "claims" || n == "calibrate") {
      if (n == "claims") {
        c->add_option("--format", claims_format, "text, csv or markdown")
            ->check(CLI::IsMember({"text", "csv", "markdown"}));
        c->add_flag("--preset-only", preset_only, "do not measure the open variants (no claim is then undecided)");
      }
      if (n == "calibrate") {
        c->add_option("--groups", calibrate_groups, "scans to run: send_us, ni_setup_us, send_tail_us, router_buffer, recv_us, send_ns_per_byte, ... (default all)");
        c->add_option("--count-slack", count_slack, "reproduced claims below the best still counted as left open")->capture_default_str();
        c->add_option("--slack", slack, "relative Figure 9 loss increase still counted as left open")->capture_default_str();
      }
      c->add_option("--options", claims_options, "machine options appended to every delta machine, e.g. ',recv_us=40'");
      c->add_option("--reference", reference, "Figure 9 as CSV")->capture_default_str();
      c->add_option("--jobs", jobs, "parallel emulations")->capture_default_str();
      continue;
    }
    c->add_option("--machine", machine, "machine (default delta:16x16)")->capture_default_str();
    c->add_option("--jobs", jobs, "parallel emulations")->capture_default_str();
    if (n == "fig9" || n == "fit" || n == "identify") c->add_option("--reference", reference, "Figure 9 as CSV")->capture_default_str();
    if (n == "identify") {
      c->add_option("--sizes", fit_sizes, "sizes whose cells enter the loss")->capture_default_str();
      c->add_option("--slack", slack, "relative loss increase still counted as left open")->capture_default_str();
    }
    if (std::string(name) == "fig9") c->add_flag("--markdown", markdown, "print Markdown tables");
    if (std::string(name) == "fit") {
      c->add_option("--sizes", fit_sizes, "sizes whose cells enter the fit")->capture_default_str();
      c->add_option("--rounds", rounds, "passes per step size")->capture_default_str();
      c->add_option("--params", fit_params, "the parameters to vary (default: every non-zero one)");
    }
  }
  if (const auto code = touchstone::cli::parse_command_line(app, argc, argv)) return *code;
  try {
    const std::string cmd = app.get_subcommands().front()->get_name();
    if (cmd == "claims")
      return print_claims(claims_options, read_reference(reference), jobs, claims::parse_format(claims_format),
                          preset_only);
    if (cmd == "calibrate") return calibrate(claims_options, read_reference(reference), jobs, calibrate_groups, count_slack, slack);
    if (cmd == "identify")
      return identify(MachineSpec::parse(machine), read_reference(reference), fit_sizes, jobs, slack);
    if (cmd == "fit")
      return fit(MachineSpec::parse(machine), read_reference(reference), fit_sizes, jobs, rounds, fit_params);
    const Machine m = parse_machine(machine);
    if (cmd == "fig9") {
      const Table paper = read_reference(reference);
      std::vector<std::string> algs;
      for (const auto& [pname, oname] : kFig9) algs.push_back(oname);
      auto cells = cells_for(algs, kSizes);
      run_cells(m, cells, jobs, false);
      print_fig9(m, paper, cells, markdown);
    } else {
      const auto& algs = cmd == "fig2" ? kFig2 : kFig6;
      auto cells = cells_for(algs, kSizes);
      run_cells(m, cells, jobs, false);
      print_plain(m, cmd == "fig2" ? "Figure 2 (one-to-all)" : "Figure 6 (all-to-one)", algs, cells);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
