// Paper 003 (Ranka, Shankar, Alsabti, "Many-to-many Personalized Communication with Bounded
// Traffic"), section 7 on the emulated CM-5: the settings of Figure 9 (k = 32, l = 1/32) and
// Figure 10 (k = 2, l = 1/2) on cm5:32, virtual time against the traffic t for every alltoallv/
// algorithm over several seeds (a new matrix and new random choices per seed), mean and spread.
//
//   paper003 [--seeds N] [--traffic 1024,4096,16384,65536] [--machine cm5:32] [--jobs N]
//   paper003 claims [--format text|csv|markdown] [--preset-only]
//                                                  section 3's costs and section 7's statements,
//                                                  the paper's beside ours, with a verdict; a claim
//                                                  that flips on an open variant is undecided
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
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

// A lower bound for any single-stage algorithm that streams one message in and one out per node
// at a time (docs/paper003.md): every processor injects its messages one after another and ejects
// its incoming ones one after another, each message streaming at the bottleneck byte time of its
// path (docs/model.md 2.3), with its packet headers, plus the send CPU cost of every message sent
// and the receive CPU cost of every message received (per message, byte and packet); a send or
// receive that overlaps the stream (send_overlap, recv_overlap) pays the larger of the stream and
// its per-byte and per-packet costs.
double single_stage_bound_ms(const Machine& m, const algorithms::TrafficMatrix& tm) {
  const int n = m.nodes();
  std::vector<Time> out(static_cast<std::size_t>(n), 0), in(static_cast<std::size_t>(n), 0);
  std::vector<LinkId> path;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const std::int64_t bytes = tm.at(i, j);
      if (i == j || bytes == 0) continue;
      path.clear();
      m.topology->route(i, j, path);
      Time b = std::max(m.net.inject_byte_time, m.net.eject_byte_time);
      for (LinkId l : path) {
        const Time lb = m.topology->link_byte_time(l);
        b = std::max(b, lb ? lb : m.net.link_byte_time);
      }
      const std::int64_t packets = (bytes + m.net.packet_payload - 1) / m.net.packet_payload;
      const Time stream = (bytes + packets * m.net.packet_header) * b;
      // The CPU costs per message, per byte and per packet (Machine::send_cost, recv_cost).
      // A send that writes packets while earlier ones leave (send_overlap) pays the larger of the
      // stream and its per-byte and per-packet costs, as such a receive does.
      const auto& ci = m.costs_of(i);
      out[static_cast<std::size_t>(i)] +=
          ci.send_overlap ? ci.send_overhead + std::max(stream, m.send_body_cost(i, static_cast<std::size_t>(bytes)))
                          : m.send_cost(i, static_cast<std::size_t>(bytes)) + stream;
      const auto& cj = m.costs_of(j);
      in[static_cast<std::size_t>(j)] += cj.recv_overlap ? cj.recv_overhead + std::max(stream, m.recv_body_cost(j, static_cast<std::size_t>(bytes)))
                                                         : stream + m.recv_cost(j, static_cast<std::size_t>(bytes));
    }
  const Time worst = std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
  return static_cast<double>(worst) / 1e9;
}

void print_row(const char* figure, int k, const char* l, long long t, const std::string& name, const std::vector<double>& ms) {
  double mean = 0;
  for (double x : ms) mean += x / static_cast<double>(ms.size());
  double var = 0;
  for (double x : ms) var += (x - mean) * (x - mean) / static_cast<double>(ms.size());
  fmt::print("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{}\n", figure, k, l, t, name, mean,
             *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()), std::sqrt(var), ms.size());
}


struct Stats {
  double mean = 0, lo = 0, hi = 0;
};
Stats stats_of(const std::vector<double>& v) {
  Stats s{0, *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
  for (double x : v) s.mean += x / static_cast<double>(v.size());
  return s;
}

// One alltoallv algorithm at one traffic setting, emulated once per seed.
struct Point {
  const algorithms::Algorithm* algorithm;
  int k;
  const char* l;
  long long t;
};

// Emulates every point over seeds 1..seeds as jobs of the experiment harness, `parallel` at once;
// the virtual times (ms) of each point, by seed.
std::vector<std::vector<double>> measure(const Machine& m, const std::vector<Point>& points, int seeds, int parallel) {
  std::vector<experiment::Job> jobs;
  for (const auto& pt : points)
    for (int seed = 1; seed <= seeds; ++seed) {
      experiment::Job j{&m, pt.algorithm, {}, {}};
      j.args.traffic = algorithms::parse_traffic(fmt::format("k={},l={},t={}", pt.k, pt.l, pt.t));
      j.options.seed = static_cast<std::uint64_t>(seed);
      jobs.push_back(std::move(j));
    }
  const auto outcomes = experiment::run_jobs(jobs, {.parallel = parallel});
  std::vector<std::vector<double>> ms(points.size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const auto& o = outcomes[i];
    if (!o.record) throw Error(fmt::format("{} on {}: {}", o.job->algorithm->name, m.name, o.error));
    ms[i / static_cast<std::size_t>(seeds)].push_back(static_cast<double>(o.record->result.makespan) / 1e9);
  }
  return ms;
}

constexpr double kTol = 1.10;  // a number within 1.10x counts as reproduced; "as well as" likewise

// The three algorithms section 7 compares at one point (a figure's setting at one t), over seeds.
struct Measured {
  long long t;
  Stats two, ss, ssp;  // two-stage, random-scheduling, random-scheduling-plus
  double best_single() const { return std::min(ss.mean, ssp.mean); }
};

// Section 7's statements, tested at every t of a figure (the t follows the id): a statement holds
// or not, a number is ours against 1 within kTol.
using Row = claims::Row<Measured>;
const std::vector<Row> kFig10Rows = {
    Row::statement(
        "fig10.single-stage-win",
        "Sec. 7, Fig. 10 (k = 2, l = 1/2): 'Both the single-stage algorithms out-performed the two-stage one'",
        "random-scheduling and -plus < two-stage",
        [](const Measured& p) {
          return claims::Statement(
              fmt::format("two-stage {:.2f}, random {:.2f}, plus {:.2f} ms", p.two.mean, p.ss.mean, p.ssp.mean),
              p.ss.mean < p.two.mean && p.ssp.mean < p.two.mean);
        }),
};
const std::vector<Row> kFig9Rows = {
    Row::statement("fig9.two-stage-beats-basic",
                   "Sec. 7, Fig. 9 (k = 32, l = 1/32): 'even out-performing the single-stage algorithm without the "
                   "improvements'",
                   "two-stage < random-scheduling",
                   [](const Measured& p) {
                     return claims::Statement(fmt::format("two-stage {:.2f}, random {:.2f} ms", p.two.mean, p.ss.mean),
                                              p.two.mean < p.ss.mean);
                   }),
    Row::number("fig9.two-stage-as-well-as-plus",
                "Sec. 7, Fig. 9: 'the two-stage algorithm performed as well as the single-stage algorithms' "
                "(two-stage / random-scheduling-plus)",
                [](const Measured& p) { return claims::Number(1.0, p.two.mean / p.ssp.mean); }, kTol, "",
                "'as well as' read as within 1.10x"),
};
// Tested in both figures: the figure goes before the id.
const std::vector<Row> kBothRows = {
    Row::statement(
        "single-stage-better",
        "Sec. 7: 'the single-stage algorithms were consistent in performing better than the two stage algorithm'",
        "best single-stage < two-stage",
        [](const Measured& p) {
          return claims::Statement(
              fmt::format("best single-stage {:.2f}, two-stage {:.2f} ms", p.best_single(), p.two.mean),
              p.best_single() < p.two.mean);
        }),
};

// Every row of `rows` at every t of a figure into L.
void add_points(claims::Ledger& L, const std::vector<Row>& rows, const std::vector<Measured>& figure,
                const std::string& prefix = "") {
  claims::add_rows(L, rows, figure, [](const Measured& p) { return std::to_string(p.t); }, prefix);
}

// Section 3's costs and section 7's statements measured on `machine`.
claims::Ledger claims_on(const std::string& machine, int seeds, const std::vector<long long>& traffic, int parallel) {
  const Machine m = parse_machine(machine);
  claims::Ledger L;

  // Section 3: "Sending and receiving a single-packet active message on the CM-5 takes 1.6 us and
  // 1.7 us respectively": the sender's CPU time of a 16-byte (one-packet) message, and the
  // receiver's from a message that has long arrived to its receive completing.
  Time send_cpu = 0, recv_cpu = 0;
  run(m, [&](Proc& p) {
    std::vector<std::byte> b(16);
    if (p.rank() == 0) {
      const Time t0 = p.now();
      Request r = p.isend(1, 0, b);
      send_cpu = p.now() - t0;
      p.wait(r);
    } else if (p.rank() == 1) {
      p.compute(milliseconds(1));  // long after the message arrived
      const Time t0 = p.now();
      p.recv(0, 0, b);
      recv_cpu = p.now() - t0;
    }
  });
  L.number("sec3.send-one-packet", "Sec. 3: 'Sending ... a single-packet active message on the CM-5 takes 1.6 us'", 1.6, to_us(send_cpu), kTol, "us");
  L.number("sec3.recv-one-packet", "Sec. 3: 'receiving a single-packet active message ... takes ... 1.7 us'", 1.7, to_us(recv_cpu), kTol, "us");

  const char* const names[] = {"alltoallv/two-stage", "alltoallv/random-scheduling", "alltoallv/random-scheduling-plus"};
  auto points = [&](int k, const char* l) {
    std::vector<Point> pts;
    for (long long t : traffic)
      for (const char* name : names) pts.push_back({&algorithms::find(name), k, l, t});
    const auto ms = measure(m, pts, seeds, parallel);
    std::vector<Measured> v;
    for (std::size_t i = 0; i < traffic.size(); ++i)
      v.push_back({traffic[i], stats_of(ms[3 * i]), stats_of(ms[3 * i + 1]), stats_of(ms[3 * i + 2])});
    return v;
  };
  const auto f9 = points(32, "1/32"), f10 = points(2, "1/2");
  add_points(L, kFig10Rows, f10);
  add_points(L, kFig9Rows, f9);
  add_points(L, kBothRows, f9, "fig9.");
  add_points(L, kBothRows, f10, "fig10.");
  double worst = 0;
  std::string at;
  for (const auto* fig : {&f9, &f10})
    for (const auto& p : *fig) {
      const double q = p.two.mean / p.best_single();
      if (q > worst) worst = q, at = fmt::format("{} at t = {}", fig == &f9 ? "Fig. 9" : "Fig. 10", p.t);
    }
  L.statement("sec7.within-1.5", "Sec. 7: 'The two-stage algorithm timings were within a factor of 1.5 times the single-stage readings'",
              "two-stage / best single-stage <= 1.5 at every point", fmt::format("worst {:.2f} ({})", worst, at), worst <= 1.5);
  std::vector<long long> bad;
  for (const auto* fig : {&f9, &f10})
    for (const auto& p : *fig)
      if (!(std::min(p.ss.hi - p.ss.lo, p.ssp.hi - p.ssp.lo) > p.two.hi - p.two.lo)) bad.push_back(p.t);
  L.statement("sec7.variance", fmt::format("Sec. 7: 'they exhibited a much larger variance in the time taken' (max - min over seeds 1..{})", seeds),
              "both single-stage spreads > two-stage's at every point", bad.empty() ? "every point" : fmt::format("not at {} points", bad.size()), bad.empty());
  double two_worst = 1;
  bad.clear();
  for (std::size_t i = 0; i < f9.size(); ++i) {
    const double q = f10[i].two.mean / f9[i].two.mean;
    two_worst = std::max(two_worst, std::max(q, 1 / q));
    if (!(f10[i].ss.mean < f9[i].ss.mean && f10[i].ssp.mean < f9[i].ssp.mean)) bad.push_back(f9[i].t);
  }
  L.number("fig10-vs-9.two-stage-same", "Sec. 7: 'The two-stage algorithm's performance remained roughly close to its best-case performance' (Fig. 10 / Fig. 9, worst over t)",
           1.0, two_worst, kTol);
  std::string bad_t;
  for (auto t : bad) bad_t += (bad_t.empty() ? "" : ",") + std::to_string(t);
  L.statement("fig10-vs-9.single-stage-improves", "Sec. 7: 'but the single-stage algorithm's performance improved considerably' (Fig. 10 against Fig. 9)",
              "both single-stage faster in Fig. 10 at every t", bad.empty() ? "every t" : "not at t = " + bad_t, bad.empty());
  return L;
}

// The claims on `machine`, each measured again at the ends of the ranges the paper leaves open
// (touchstone::open_variants) unless `preset_only`: a claim that flips there is undecided.
int print_claims(const std::string& machine, int seeds, const std::vector<long long>& traffic, int parallel,
                 claims::Format format, bool preset_only) {
  claims::Ledger L = claims_on(machine, seeds, traffic, parallel);
  const auto open = preset_only ? std::vector<OpenVariant>{} : open_variants(machine);
  for (const auto& v : open) bench::weigh(L, claims_on(machine + "," + v.options, seeds, traffic, parallel), v);
  if (format == claims::Format::text)
    fmt::print("Paper 003 claims on {} (seeds 1..{}; numbers within {:.2f}x count as reproduced; {} open variants)\n\n",
               machine, seeds, kTol, open.size());
  L.print(stdout, format);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"paper 003, Figures 9 and 10 settings: alltoallv/ algorithms against traffic"};
  // Basic random scheduling's standard deviation over seeds is 5% to 13% of its mean (Figures 9
  // and 10), so five seeds left two verdicts to chance: at 30 every verdict is the one 100 give.
  int seeds = 30;
  std::vector<long long> traffic = {1024, 4096, 16384, 65536};
  std::string machine = "cm5:32";
  app.add_option("--seeds", seeds, "seeds per point (1..N)")->check(CLI::Range(1, 1000));
  app.add_option("--traffic", traffic, "traffic values t in bytes")->delimiter(',');
  app.add_option("--machine", machine, "machine spec");
  int parallel = 0;
  app.add_option("--jobs", parallel, "emulations at once (0: the host's cores)")->check(CLI::Range(0, 1024));
  std::string format = "text";
  app.fallthrough();  // --seeds, --traffic, --machine also after "claims"
  auto* cl = app.add_subcommand("claims", "section 3's costs and section 7's statements beside ours, with verdicts");
  cl->add_option("--format", format, "text, csv or markdown")->check(CLI::IsMember({"text", "csv", "markdown"}));
  bool preset_only = false;
  cl->add_flag("--preset-only", preset_only, "do not measure the open variants (no claim is then undecided)");
  if (const auto code = touchstone::cli::parse_command_line(app, argc, argv)) return *code;
  try {
    if (*cl) return print_claims(machine, seeds, traffic, parallel, claims::parse_format(format), preset_only);
    const Machine m = parse_machine(machine);
    const struct {
      const char* figure;
      int k;
      const char* l;
    } settings[] = {{"Figure 9", 32, "1/32"}, {"Figure 10", 2, "1/2"}};
    fmt::print("figure,k,l,t,algorithm,mean_ms,min_ms,max_ms,stddev_ms,seeds\n");
    const auto algs = algorithms::select("alltoallv/all");
    std::vector<Point> pts;
    for (const auto& s : settings)
      for (const long long t : traffic)
        for (const auto* alg : algs) pts.push_back({alg, s.k, s.l, t});
    const auto ms = measure(m, pts, seeds, parallel);
    auto next = ms.begin();
    for (const auto& s : settings)
      for (const long long t : traffic) {
        const auto spec = algorithms::parse_traffic(fmt::format("k={},l={},t={}", s.k, s.l, t));
        std::vector<double> bound;
        for (int seed = 1; seed <= seeds; ++seed)
          bound.push_back(single_stage_bound_ms(m, algorithms::generate_traffic(m.nodes(), spec, static_cast<std::uint64_t>(seed))));
        print_row(s.figure, s.k, s.l, t, "single-stage-bound", bound);
        for (const auto* alg : algs) print_row(s.figure, s.k, s.l, t, alg->name, *next++);
      }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
