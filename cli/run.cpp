// `touchstone run`: one algorithm of the catalog on one machine, its figures as a table, CSV or JSON
// (docs/cli.md), with the debugging options of docs/debugging.md.
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/common_options.hpp"
#include "cli/debug_options.hpp"
#include "cli/numeric_option.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/explore.hpp"
#include "touchstone/touchstone.hpp"

namespace touchstone::cli {

namespace {

struct Options {
  CommonOptions common;
  std::string algorithm;
  long long size = 0;
  DebugOptions debug;
  double wall_limit_s = 600;
};

int run(const Options& opt, std::optional<std::size_t> given_size) {
  const CommonOptions& c = opt.common;
  const Machine m = build_machine(MachineSpec::parse(c.machine));
  load_plugins(c.plugins);
  const auto& alg = algorithms::find(opt.algorithm);
  std::optional<std::vector<std::size_t>> given;
  if (given_size) given = std::vector<std::size_t>{*given_size};
  const std::size_t size = run_sizes(c, {&alg}, given, "--size").front();
  RunOptions o = run_options(c);
  o.wall_limit_s = opt.wall_limit_s;
  o.stop_on_signals = true;
  o.progress_line = true;
  apply_debug_options(opt.debug, o);
  const algorithms::Args args = algorithm_args(c, size);
  const Program program = [&alg, args](Proc& p) { alg.program(p, args); };
  experiment::Record r;
  try {
    r = experiment::emulate(m, alg, args, o);
  } catch (const RunError& e) {
    if (dynamic_cast<const RunUsageError*>(&e)) throw;
    // A failed run is explored too, as mpirun explores one: another order of its races may complete.
    const int rc = report_failure(e);
    if (const int runs = exploring_runs(opt.debug); runs > 0)
      fmt::print(stderr, "{}", describe_exploration(explore(m, program, o, runs), runs));
    return rc;
  }
  const Findings findings = debug_findings(opt.debug, m, program, o, r.result);
  if (!opt.debug.races.empty()) r.races = r.result.races.size();
  const std::vector<const experiment::Record*> one{&r};
  experiment::write_output("", c.format == "json"  ? experiment::record_json(r)
                               : c.format == "csv" ? experiment::records_csv(one)
                                                   : experiment::record_lines(r));
  fmt::print(stderr, "{}", findings.text);
  return findings.other_outcomes ? 3 : 0;
}

}  // namespace

Subcommand add_run(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("run", "run one algorithm on one machine and print its figures");
  add_common_options(cmd, o->common);
  cmd->add_option("--algorithm", o->algorithm, "COLLECTIVE/NAME (touchstone list algorithms)")->required();
  cmd->add_option(
         "--size", o->size,
         "actual message size L in bytes (0 .. 2^30); for alltoallv/ the traffic per processor t, unless --traffic "
         "gives t= or file=")
      ->check(number_in(0LL, 1LL << 30));
  add_debug_options(cmd, o->debug);
  cmd->add_option("--wall-limit", o->wall_limit_s,
                  "host seconds the run may go without progress before it is ended, naming the VP running and its "
                  "stack; 0: no limit")
      ->check(number_in(0.0, 1e9))
      ->capture_default_str();
  return Subcommand{cmd, [o, cmd] {
                      return run(*o, cmd->count("--size")
                                         ? std::optional<std::size_t>(static_cast<std::size_t>(o->size))
                                         : std::nullopt);
                    }};
}

}  // namespace touchstone::cli
