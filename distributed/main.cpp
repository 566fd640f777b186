// touchstone-distributed: one catalog algorithm on one machine, or an MPI program, the emulation
// split over the MPI processes it is started as (docs/parallel.md, "Several processes"), for
// machines whose VPs do not fit one host's memory:
//
//   mpirun -np 4 touchstone-distributed --machine mesh:1024x1024 --algorithm selftest/ring --size 16
//   mpirun -np 4 touchstone-distributed mpirun --machine mesh:16x16 ./prog args...   (relay.cpp)
//
// Process k runs the programs of its share of the ranks and a copy of the network; the processes
// meet once per window, which ends the machine's least send set-up after the earliest time a VP may
// act (an MPI_Allgather of that window's
// messages, and the payloads of those bound for another process with them or in an MPI_Alltoallv). The run is the one
// `touchstone run` makes in one process, trace_hash included, and the algorithm checks the data it received (unless
// --phantom); process 0 prints it, with each process's peak memory. A program of its own, apart from the `touchstone`
// command, because that one carries Touchstone's own MPI library (for `touchstone mpirun`), whose MPI_ functions would
// stand in for Open MPI's here.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/parse_command_line.hpp"
#include "mpi_partition.hpp"
#include "relay.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using touchstone::MpiPartition;

struct Options {
  std::string machine = "mesh:4x4", algorithms, sizes, format = "table";
  std::string trace, order_log;  // written by process 0, as `touchstone run` writes them
  std::string traffic;           // alltoallv/'s communication matrix, as `touchstone run --traffic`
  std::string eager_limit;       // as `touchstone run --eager-limit`: the machine's own when empty
  std::string races, schedule;   // as `touchstone run --races[=error-all]` and `--schedule`
  std::vector<std::string> plugins;  // shared objects of algorithms of one's own, as `touchstone run --plugin`
  bool explain = false, internal = false;
  double time_limit_s = touchstone::to_seconds(touchstone::RunOptions{}.time_limit);
  int root = 0;
  std::uint64_t seed = 1, perturb = 0;
  unsigned stack_kb = 128;
  int host_cores = 1;  // each process one host core: a split run usually has a process per core
  bool phantom = false;
};

// "a,b" and "COLLECTIVE/all" as `touchstone sweep` reads them (algorithms::select), or "all": the
// whole catalog but the self-test that deadlocks on purpose.
std::vector<const touchstone::algorithms::Algorithm*> named(const std::string& list) {
  namespace alg = touchstone::algorithms;
  if (list != "all") return alg::select(list);
  std::vector<const alg::Algorithm*> out;
  for (const auto& a : alg::catalog())
    if (a.name != "selftest/deadlock") out.push_back(&a);
  return out;
}

std::vector<std::size_t> sizes_of(const std::string& list) {
  std::vector<std::size_t> out;
  std::size_t from = 0;
  while (from <= list.size()) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    const std::string item = list.substr(from, comma - from);
    from = comma + 1;
    const auto v = touchstone::number_in_range<std::size_t>(item, 0, std::size_t{1} << 30);
    if (!v) throw touchstone::UsageError(fmt::format("--sizes: '{}' is not a size in bytes (0 .. 2^30)", item));
    out.push_back(*v);
  }
  return out;
}

// The options of every run, read once (a bad --eager-limit or --schedule is the command's usage
// error, not one run's).
touchstone::RunOptions run_options(const Options& opt, const std::shared_ptr<MpiPartition>& part) {
  using namespace touchstone;
  RunOptions o;
  o.phantom_payloads = opt.phantom;
  o.seed = opt.seed;
  o.perturb = opt.perturb;
  o.stack_bytes = std::size_t{opt.stack_kb} << 10;
  o.host_cores = opt.host_cores;
  o.partition = part;
  o.trace_file = opt.trace;
  o.order_log_file = opt.order_log;
  o.time_limit = *time_limit_from_seconds(opt.time_limit_s);  // checked by the option
  if (!opt.eager_limit.empty()) o.eager_limit = parse_eager_limit("--eager-limit", opt.eager_limit);
  o.races = opt.races.empty() ? RaceCheck::off : opt.races == "error-all" ? RaceCheck::error : RaceCheck::report;
  if (!opt.schedule.empty()) o.schedule = parse_schedule(opt.schedule);
  o.explain = opt.explain;
  o.report_internal = opt.internal;
  return o;
}

// One emulation, split over the processes; every process's peak memory gathered on process 0.
nlohmann::json emulate(const Options& opt, const touchstone::RunOptions& o, const touchstone::Machine& m,
                       const touchstone::algorithms::Algorithm& alg, std::size_t size,
                       const std::shared_ptr<MpiPartition>& part) {
  using namespace touchstone;
  const algorithms::Args args = algorithms::run_args(size, opt.root, !opt.phantom, opt.traffic);
  const experiment::Record r = experiment::emulate(m, alg, args, o);
  double rss = r.peak_rss_mb;
  std::vector<double> all(static_cast<std::size_t>(part->count()));
  MPI_Gather(&rss, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  // Every process ends with the run's races and who blocked whom: process 0 prints them, as `touchstone run` does.
  if (part->index() == 0) {
    if (!opt.races.empty()) std::fputs(describe_races(r.result.races, o.describe_race).c_str(), stderr);
    std::fputs(r.result.explanation.c_str(), stderr);
  }
  nlohmann::json j = nlohmann::json::parse(experiment::record_json(r));
  j["processes"] = part->count();
  j["windows"] = r.result.windows;  // the times the processes met
  j["process_peak_rss_mb"] = all;
  return j;
}

void print(const Options& opt, const nlohmann::json& j) {
  if (opt.format == "json") {
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
    return;
  }
  for (const auto& record : j.is_array() ? j : nlohmann::json::array({j})) {
    for (const auto& [k, v] : record.items())
      fmt::print("{:<20} {}\n", k, v.is_string() ? v.get<std::string>() : v.dump());
    if (j.is_array()) fmt::print("\n");
  }
}

int run(const Options& opt, const std::shared_ptr<MpiPartition>& part) {
  const touchstone::RunOptions o = run_options(opt, part);
  const touchstone::Machine m = touchstone::parse_machine(opt.machine);
  for (const auto& path : opt.plugins) touchstone::algorithms::load_plugin(path);
  const auto algs = named(opt.algorithms);
  // 16 bytes unless given; a --traffic that fixes t (or a file) gives the size itself.
  std::optional<std::vector<std::size_t>> given;
  if (!opt.sizes.empty())
    given = sizes_of(opt.sizes);
  else if (opt.traffic.empty())
    given = std::vector<std::size_t>{16};
  const auto sizes = touchstone::algorithms::run_sizes(opt.traffic, algs, given, "--sizes");
  if ((!opt.trace.empty() || !opt.order_log.empty()) && (algs.size() != 1 || sizes.size() != 1))
    throw touchstone::UsageError("--trace and --order-log record one run: give one algorithm and one size");
  if (algs.size() == 1 && sizes.size() == 1) {
    const nlohmann::json j = emulate(opt, o, m, *algs[0], sizes[0], part);
    if (part->index() == 0) print(opt, j);
    return 0;
  }
  // Several runs, one after another: a run that fails or is refused is listed with its error (in
  // every process alike, so the processes stay together), and the others go on.
  nlohmann::json all = nlohmann::json::array();
  int rc = 0;
  for (const auto* alg : algs)
    for (const std::size_t size : sizes) {
      try {
        all.push_back(emulate(opt, o, m, *alg, size, part));
      } catch (const std::exception& e) {
        // A refusal (what cannot be split, what the machine does not suit) is a usage error.
        all.push_back({{"algorithm", alg->name}, {"size", size}, {"error", e.what()}});
        const bool usage =
            dynamic_cast<const touchstone::UsageError*>(&e) || dynamic_cast<const touchstone::RunUsageError*>(&e);
        if (!usage) rc = 2;
      }
    }
  if (part->index() == 0) print(opt, all);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "mpirun") return relay_mpirun(argc, argv);
  MPI_Init(&argc, &argv);
  const auto part = std::make_shared<MpiPartition>();
  Options opt;
  CLI::App app("one catalog algorithm on one machine, the emulation split over the MPI processes",
               "touchstone-distributed");
  app.add_option("--machine", opt.machine, "machine spec, e.g. mesh:1024x1024 (touchstone list machines)");
  app.add_option("--algorithm,--algorithms", opt.algorithms,
                 "COLLECTIVE/NAME (touchstone list algorithms), several separated by commas, COLLECTIVE/all or all")
      ->required();
  app.add_option("--plugin", opt.plugins,
                 "load a shared object that registers algorithms of your own (docs/extending.md); repeatable")
      ->allow_extra_args(false);
  app.add_option("--size,--sizes", opt.sizes,
                 "message size L in bytes, or several separated by commas (alltoallv/: the traffic per processor t)");
  app.add_option("--traffic", opt.traffic,
                 "communication matrix of alltoallv/ algorithms: k=K,l=L,t=BYTES (paper 003, section 7) or file=M.csv");
  app.add_option("--root", opt.root, "source or destination processor of rooted collectives")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", opt.seed, "seed of every random choice of the model and algorithms");
  app.add_option("--perturb", opt.perturb, "seeded random host delays in the VPs (0: none); the results stay the same");
  app.add_flag("--phantom", opt.phantom, "sizes only: no payload bytes are stored, copied or checked");
  app.add_option("--host-cores", opt.host_cores,
                 "host cores each process's share of the emulation may use, as `touchstone run --host-cores` (default "
                 "1: one process to a core); results are identical")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--stack-kb", opt.stack_kb, "host stack of each VP (KiB)")->check(CLI::Range(64u, 1048576u));
  app.add_option("--format", opt.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  app.add_option("--trace", opt.trace, "write the run's Chrome trace (Perfetto) here, from process 0");
  app.add_option("--order-log", opt.order_log, "write the run's per-VP message order log here, from process 0");
  app.add_option("--time-limit", opt.time_limit_s, "virtual seconds after which a run is stopped as an error")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // From 1 ps to kMaxTimeLimit, as `touchstone run --time-limit` (CLI::Range would let NaN through).
            const auto v = touchstone::number_from_text<double>(text);
            if (v && touchstone::time_limit_from_seconds(*v)) return {};
            return fmt::format("'{}' is not a number of seconds in {}..{}", text, touchstone::to_seconds(1),
                               touchstone::to_seconds(touchstone::kMaxTimeLimit));
          },
          "SECONDS"))
      ->capture_default_str();
  app.add_option("--eager-limit", opt.eager_limit,
                 "flow control (docs/model.md 2.16): messages above BYTES go by rendezvous; unlimited (only a full "
                 "buffer= does), or off; overrides the machine's eager_limit");
  app.add_flag("--races{report}", opt.races,
               "find message races at receives and probes with any_source or any_tag; --races=error-all fails the "
               "run (exit 2) on any race (--races=error explores other matches: `touchstone run`, one process)")
      ->check(CLI::IsMember({"report", "error-all"}));
  app.add_option("--schedule", opt.schedule,
                 "replay forced matches RANK:CALL=SOURCE[,...] (from touchstone run --explore)");
  app.add_flag(
      "--explain", opt.explain,
      "print the channels with the most blocked time and the longest waits, with the chain of worms in the way");
  app.add_flag("--internal", opt.internal, "deadlock reports show the runtime's own messages (barrier, split)");
  // A command line refused as every Touchstone program refuses one (docs/cli.md, "Exit codes"),
  // said once, by process 0.
  if (const auto code = touchstone::cli::parse_command_line(app, argc, argv, part->index() == 0)) {
    MPI_Finalize();
    return *code;
  }
  int rc = 0;
  try {
    rc = run(opt, part);
  } catch (const std::exception& e) {
    // Every process ends with an error; the one whose rank failed says why, process 0 says it too.
    const std::string what = e.what();
    if (part->index() == 0 || what.find("of the split run failed") == std::string::npos)
      std::fprintf(stderr, "touchstone-distributed (process %d of %d): error: %s%s", part->index(), part->count(),
                   what.c_str(), what.ends_with('\n') ? "" : "\n");
    // As `touchstone run`: 1 for a usage error (also one found inside the run), 2 for a failed run.
    const bool usage =
        dynamic_cast<const touchstone::UsageError*>(&e) || dynamic_cast<const touchstone::RunUsageError*>(&e);
    rc = usage || !dynamic_cast<const touchstone::RunError*>(&e) ? 1 : 2;
  }
  MPI_Finalize();
  return rc;
}
