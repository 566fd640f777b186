// Paper 003 (Ranka, Shankar, Alsabti, "Many-to-many Personalized Communication with Bounded
// Traffic"), section 7 on the emulated CM-5: the settings of Figure 9 (k = 32, l = 1/32) and
// Figure 10 (k = 2, l = 1/2) on cm5:32, virtual time against the traffic t for every alltoallv/
// algorithm over several seeds (a new matrix and new random choices per seed), mean and spread.
//
//   paper003 [--seeds N] [--traffic 1024,4096,16384,65536] [--machine cm5:32]
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using namespace touchstone;

// A lower bound for any single-stage algorithm on a one-port machine (docs/paper003.md): every
// processor injects its messages one after another and ejects its incoming ones one after
// another, each message streaming at the bottleneck byte time of its path (docs/model.md 2.3),
// with its packet headers, plus C_send per message sent and C_recv per message received.
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
      out[static_cast<std::size_t>(i)] += m.costs.send_overhead + stream;
      in[static_cast<std::size_t>(j)] += stream + m.costs.recv_overhead;
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"paper 003, Figures 9 and 10 settings: alltoallv/ algorithms against traffic"};
  int seeds = 5;
  std::vector<long long> traffic = {1024, 4096, 16384, 65536};
  std::string machine = "cm5:32";
  app.add_option("--seeds", seeds, "seeds per point (1..N)")->check(CLI::Range(1, 1000));
  app.add_option("--traffic", traffic, "traffic values t in bytes")->delimiter(',');
  app.add_option("--machine", machine, "machine spec");
  CLI11_PARSE(app, argc, argv);
  try {
    const Machine m = parse_machine(machine);
    const struct {
      const char* figure;
      int k;
      const char* l;
    } settings[] = {{"Figure 9", 32, "1/32"}, {"Figure 10", 2, "1/2"}};
    fmt::print("figure,k,l,t,algorithm,mean_ms,min_ms,max_ms,stddev_ms,seeds\n");
    for (const auto& s : settings)
      for (const long long t : traffic) {
        const auto spec = algorithms::parse_traffic(fmt::format("k={},l={},t={}", s.k, s.l, t));
        std::vector<double> bound;
        for (int seed = 1; seed <= seeds; ++seed)
          bound.push_back(single_stage_bound_ms(m, algorithms::generate_traffic(m.nodes(), spec, static_cast<std::uint64_t>(seed))));
        print_row(s.figure, s.k, s.l, t, "single-stage-bound", bound);
        for (const auto* alg : algorithms::select("alltoallv/all")) {
          std::vector<double> ms;
          for (int seed = 1; seed <= seeds; ++seed) {
            algorithms::Args args;
            args.traffic = spec;
            RunOptions o;
            o.seed = static_cast<std::uint64_t>(seed);
            const RunResult r = run(m, [&](Proc& p) { alg->program(p, args); }, o);
            ms.push_back(static_cast<double>(r.makespan) / 1e9);
          }
          print_row(s.figure, s.k, s.l, t, alg->name, ms);
        }
      }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
