// Paper 000 (Hambrusch, Hameed, Khokhar, "Communication Operations on Coarse-Grained Mesh
// Architectures") on the emulated Delta: the reproduction of its tables and the fit of the delta
// machine's cost parameters to Figure 9.
//
//   paper000 fig9   all-to-all, 8 algorithms x 16..16384 B, ours beside the paper's (Figure 9)
//   paper000 fig2   one-to-all (scatter), the paper's Figure 2 layout
//   paper000 fig6   all-to-one (gather), the paper's Figure 6 layout
//   paper000 fit    coordinate descent of the delta parameters against Figure 9
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <oneapi/tbb/parallel_for_each.h>
#include <oneapi/tbb/task_arena.h>

#include "algorithms/registry.hpp"
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
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (char c : s) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) out.push_back(cur), cur.clear();
      else cur += c;
    }
    out.push_back(cur);
    return out;
  };
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = split(line);
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

// Runs every (algorithm, size) cell in parallel; phantom payloads when `phantom` (same times).
void run_cells(const Machine& m, std::vector<Cell>& cells, int jobs, bool phantom) {
  RunOptions opts;
  opts.phantom_payloads = phantom;
  tbb::task_arena arena(jobs);
  arena.execute([&] {
    tbb::parallel_for_each(cells.begin(), cells.end(), [&](Cell& c) {
      try {
        const auto& alg = algorithms::find(c.algorithm);
        const algorithms::Args args{c.size, 0, !phantom};
        c.ms = to_us(run(m, [&](Proc& p) { alg.program(p, args); }, opts).makespan) / 1e3;
      } catch (const std::exception& e) {
        c.error = e.what();
      }
    });
  });
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

std::string spec_of(const std::string& base, const std::vector<Param>& ps) {
  std::string s = base;
  for (const auto& p : ps) s += fmt::format(",{}={:.4g}", p.key, p.value);
  return s;
}

int fit(const std::string& base, const Table& paper, const std::vector<std::size_t>& sizes, int jobs, int rounds,
        const std::vector<std::string>& only) {
  // Starts from the preset's values; injection and ejection channels keep the link's byte time.
  const Machine m0 = parse_machine(base);
  std::vector<Param> all = {{"send_us", static_cast<double>(m0.costs.send_overhead) / 1e6},
                            {"recv_us", static_cast<double>(m0.costs.recv_overhead) / 1e6},
                            {"send_ns_per_byte", static_cast<double>(m0.costs.send_per_byte) / 1e3},
                            {"recv_ns_per_byte", static_cast<double>(m0.costs.recv_per_byte) / 1e3},
                            {"link_ns_per_byte", static_cast<double>(m0.net.link_byte_time) / 1e3},
                            {"match_ns", static_cast<double>(m0.costs.match_per_entry) / 1e3},
                            {"copy_ns_per_byte", static_cast<double>(m0.costs.copy_per_byte) / 1e3},
                            {"copy_ns_per_piece", static_cast<double>(m0.costs.copy_per_piece) / 1e3}};
  // The parameters varied: all of them, or those named by --params. A parameter at 0 stays there
  // (the search is multiplicative), so a new one needs a starting value in --machine.
  std::vector<Param> ps;
  for (const auto& p : all)
    if (p.value > 0 && (only.empty() || std::find(only.begin(), only.end(), p.key) != only.end())) ps.push_back(p);
  for (const auto& k : only)
    if (std::none_of(ps.begin(), ps.end(), [&](const Param& p) { return k == p.key; }))
      throw UsageError(fmt::format("fit: '{}' is not a fitted parameter, or it is 0 on {}", k, base));
  const auto link = std::find_if(ps.begin(), ps.end(), [](const Param& p) { return std::string(p.key) == "link_ns_per_byte"; });
  const auto link_index = link == ps.end() ? ps.size() : static_cast<std::size_t>(link - ps.begin());
  const double link0 = static_cast<double>(m0.net.link_byte_time) / 1e3;
  std::vector<std::string> algs;
  for (const auto& [pname, oname] : kFig9) algs.push_back(oname);
  auto loss = [&](const std::vector<Param>& cand) {
    const double link_now = link_index < cand.size() ? cand[link_index].value : link0;
    Machine m = parse_machine(spec_of(base, cand) + fmt::format(",inject_ns_per_byte={0:.4g},eject_ns_per_byte={0:.4g}",
                                                                link_now));
    std::vector<Cell> cells;
    for (const auto& c : cells_for(algs, sizes)) {
      const auto& pname = std::find_if(kFig9.begin(), kFig9.end(), [&](auto& p) { return p.second == c.algorithm; })->first;
      if (paper.count(pname) && paper.at(pname).count(c.size)) cells.push_back(c);  // only cells the paper has
    }
    run_cells(m, cells, jobs, true);
    double sum = 0;
    int n = 0;
    for (const auto& c : cells) {
      const auto& [pname, oname] = *std::find_if(kFig9.begin(), kFig9.end(), [&](auto& p) { return p.second == c.algorithm; });
      auto pr = paper.find(pname);
      if (std::isnan(c.ms) || pr == paper.end() || !pr->second.count(c.size)) continue;
      const double d = std::log(c.ms / pr->second.at(c.size));
      sum += d * d;
      ++n;
    }
    return n ? sum / n : INFINITY;
  };
  double best = loss(ps);
  fmt::print("start: loss {:.4f}  {}\n", best, spec_of(base, ps));
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
            fmt::print("step {:.3f}: loss {:.4f}  {}\n", step, best, spec_of(base, ps));
            std::fflush(stdout);
            break;
          }
        }
      }
      if (!improved) break;
    }
  }
  fmt::print("best: loss {:.4f} (mean squared log ratio; rms factor {:.3f})\n{}\n", best, std::exp(std::sqrt(best)),
             spec_of(base, ps));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Paper 000 on the emulated Intel Delta: reproductions of Figures 2, 6, 9 and the fit of the delta machine"};
  app.require_subcommand(1);
  std::string machine = "delta:16x16", reference = "bench/reference/delta_fig9_alltoall_256.csv";
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool markdown = false;
  std::vector<std::size_t> fit_sizes = {16, 256, 4096, 16384};
  int rounds = 3;
  std::vector<std::string> fit_params;
  for (auto* name : {"fig2", "fig6", "fig9", "fit"}) {
    auto* c = app.add_subcommand(name, std::string(name) == "fit" ? "fit the delta parameters to Figure 9"
                                                                  : std::string("reproduce Figure ") + (name + 3));
    c->add_option("--machine", machine, "machine (default delta:16x16)")->capture_default_str();
    c->add_option("--jobs", jobs, "parallel emulations")->capture_default_str();
    if (std::string(name) == "fig9" || std::string(name) == "fit")
      c->add_option("--reference", reference, "Figure 9 as CSV")->capture_default_str();
    if (std::string(name) == "fig9") c->add_flag("--markdown", markdown, "print Markdown tables");
    if (std::string(name) == "fit") {
      c->add_option("--sizes", fit_sizes, "sizes whose cells enter the fit")->capture_default_str();
      c->add_option("--rounds", rounds, "passes per step size")->capture_default_str();
      c->add_option("--params", fit_params, "the parameters to vary (default: every non-zero one)");
    }
  }
  CLI11_PARSE(app, argc, argv);
  try {
    const std::string cmd = app.get_subcommands().front()->get_name();
    if (cmd == "fit") return fit(machine, read_reference(reference), fit_sizes, jobs, rounds, fit_params);
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
