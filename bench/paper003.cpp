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

int main(int argc, char** argv) {
  using namespace touchstone;
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
      for (const long long t : traffic)
        for (const auto* alg : algorithms::select("alltoallv/all")) {
          std::vector<double> ms;
          for (int seed = 1; seed <= seeds; ++seed) {
            algorithms::Args args;
            args.traffic = algorithms::parse_traffic(fmt::format("k={},l={},t={}", s.k, s.l, t));
            RunOptions o;
            o.seed = static_cast<std::uint64_t>(seed);
            const RunResult r = run(m, [&](Proc& p) { alg->program(p, args); }, o);
            ms.push_back(static_cast<double>(r.makespan) / 1e9);
          }
          double mean = 0;
          for (double x : ms) mean += x / static_cast<double>(ms.size());
          double var = 0;
          for (double x : ms) var += (x - mean) * (x - mean) / static_cast<double>(ms.size());
          fmt::print("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{}\n", s.figure, s.k, s.l, t, alg->name, mean,
                     *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()), std::sqrt(var),
                     ms.size());
        }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
