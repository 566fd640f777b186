// `touchstone mpirun --machine SPEC [-np P] [--coll C=ALG,...] [run options] ./prog args...`
// (docs/mpi.md): runs an MPI program module on every VP through libtouchstone_mpi.so.
#include "cli/command.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/common_options.hpp"
#include "cli/debug_options.hpp"
#include "cli/distributed.hpp"
#include "cli/numeric_option.hpp"
#include "touchstone/error.hpp"
#include "touchstone/experiment/child.hpp"
#include "touchstone/explore.hpp"
#include "touchstone/mpirun.hpp"
#include "touchstone/number_text.hpp"

namespace touchstone::cli {

namespace {

struct Options {
  std::string machine = kDefaultMachine;  // as given: parsed once into launch.machine
  mpi::LaunchOptions launch;
  DebugOptions debug;  // --trace, --order-log, --perturb, --races, --schedule, --explain, ...
  std::vector<std::string> coll;
  std::vector<std::string> plugins;  // --plugin: algorithms of the user's that --coll may name
  std::string execution = "fibers";
  double time_limit_s = 3600;
  double wall_limit_s = 600;
  std::string compute = "zero";
  std::string split_pipe;  // touchstone-distributed's pipes (cli/distributed.hpp)
  std::string eager_limit;
  std::size_t stack_kb = mpi::program_run_options().stack_bytes / 1024;
  std::string explore_outcome;  // an explored run (child of --explore): where to write its outcome
  bool check = false;           // --check: synchronous sends, synchronizing collectives, leaks are errors
};

// The command line as given (normalize_mpirun_args): --explore re-runs it in child processes.
std::vector<std::string>& command_line() {
  static std::vector<std::string> args;
  return args;
}

// An explored run's outcome as the child writes it for its parent (--explore-outcome FILE): its
// races (also of a failed run, up to the failure; forced matches included, with the times that
// order them) and, when it completed, what each rank received.
void write_outcome(const std::string& path, const std::vector<Race>& found, const RunResult* r) {
  nlohmann::json races = nlohmann::json::array();
  for (const Race& race : found) {
    nlohmann::json alternatives = nlohmann::json::array();
    for (const auto& a : race.alternatives) alternatives.push_back(a.source);
    races.push_back({{"rank", race.rank}, {"call", race.call}, {"forced", race.forced}, {"posted", race.posted},
                     {"arrival", race.arrival}, {"alternatives", alternatives}});
  }
  nlohmann::json j{{"races", races}};
  if (r) j.update({{"received", r->received}, {"trace_hash", r->trace_hash}});
  std::ofstream(path) << j.dump();
}

// What the program wrote to stdout, by rank (the child runs with --tag-output): each rank's lines
// in order, whatever the interleaving of ranks, so that output compares between schedules.
std::uint64_t output_digest(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::uint64_t> by_rank;
  std::string line;
  while (std::getline(in, line)) {
    const auto close = line.find("] ");
    const std::string rank = line.starts_with("[") && close != std::string::npos ? line.substr(1, close - 1) : "";
    std::uint64_t& h = by_rank[rank];
    for (const char c : line) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    h = (h ^ '\n') * 0x100000001b3ULL;
  }
  std::uint64_t all = 0xcbf29ce484222325ULL;
  for (const auto& [rank, h] : by_rank) all = (all ^ std::hash<std::string>{}(rank) ^ h) * 0x100000001b3ULL;
  return all;
}

// `mpirun --explore N`: each explored run, the original's replay included, is a fresh `touchstone
// mpirun` process (a freshly loaded program and a new MPI session), the same command line less
// --explore, --trace, --order-log, --explain and --summary, with --races, --tag-output and --schedule
// CHOICES; its stdout is kept for comparison. It reports its races through --explore-outcome; a
// non-zero exit is a failed run, described by its error's first line.
RunOutcome explored_run(const std::vector<ForcedMatch>& schedule, const std::filesystem::path& dir, int number) {
  const auto& given = command_line();
  std::vector<std::string> args{given.at(0), "mpirun"};
  std::size_t i = 2;
  std::error_code ec;
  for (; i < given.size() && !std::filesystem::is_regular_file(given[i], ec); ++i) {
    const std::string& a = given[i];
    const auto name = a.substr(0, a.find('='));
    const bool valued = name == "--explore" || name == "--trace" || name == "--order-log" || name == "--schedule";
    if (valued || name == "--explain" || name == "--races" || name == "--tag-output" || name == "--summary") {
      if (valued && a.find('=') == std::string::npos) ++i;  // its value is the next argument
      continue;
    }
    args.push_back(a);
  }
  const std::string outcome_file = (dir / fmt::format("run{}.json", number)).string();
  const std::string err_file = (dir / fmt::format("run{}.err", number)).string();
  const std::string out_file = (dir / fmt::format("run{}.out", number)).string();
  args.insert(args.end(), {"--races", "--tag-output", "--explore-outcome", outcome_file});
  if (!schedule.empty()) args.insert(args.end(), {"--schedule", format_schedule(schedule)});
  args.insert(args.end(), given.begin() + static_cast<std::ptrdiff_t>(i), given.end());
  std::fflush(stdout);
  std::fflush(stderr);
  const int rc = experiment::run_child("/proc/self/exe", args, out_file, err_file,
                                       "mpirun --explore: cannot start an explored run")
                     .status;
  RunOutcome out;
  out.exit_status = rc;
  out.output = output_digest(out_file);
  // A process killed before it wrote its outcome (a crash) is a failed run without races.
  std::ifstream outcome(outcome_file);
  const auto j = outcome ? nlohmann::json::parse(outcome) : nlohmann::json{{"races", nlohmann::json::array()}};
  for (const auto& r : j.at("races")) {
    Race race;
    race.rank = r.at("rank");
    race.call = r.at("call");
    race.forced = r.at("forced");
    race.posted = r.at("posted");
    race.arrival = r.at("arrival");
    for (const auto& src : r.at("alternatives"))
      race.alternatives.push_back(RaceAlternative{0, src.get<int>(), 0, 0, 0});
    out.races.push_back(std::move(race));
  }
  if (rc != 0) {
    // The error's first line: after "error: the run failed:"; else (MPI_Abort, a rank's exit
    // status) mpirun's last line, after what the program wrote just before it (a failed check).
    // The line "trace_hash HEX (of SHARES)" names the run up to its failure.
    std::ifstream in(err_file);
    std::string line, last, before_last, after_failed;
    bool failed_next = false;
    while (std::getline(in, line)) {
      if (failed_next && after_failed.empty()) after_failed = line;
      failed_next = line == "error: the run failed:";
      const auto hash =
          line.rfind("trace_hash ", 0) == 0
              ? number_from_text<std::uint64_t>(std::string_view(line).substr(11, line.find(' ', 11) - 11), 16)
              : std::nullopt;
      if (hash) {
        out.trace_hash = *hash;
        continue;
      }
      if (line.empty()) continue;
      before_last = last;
      last = line;
    }
    out.failed = true;
    if (!after_failed.empty())
      out.outcome = after_failed;
    else if (last.empty())
      out.outcome = fmt::format("exit status {}", rc);
    else
      out.outcome = (before_last.empty() ? "" : before_last + "; ") + last;
    return out;
  }
  out.outcome = "completed";
  if (j.contains("received")) out.received = j.at("received").get<std::vector<std::uint64_t>>();
  if (j.contains("trace_hash")) out.trace_hash = j.at("trace_hash").get<std::uint64_t>();
  return out;
}

// The options of `run` that an MPI run has too, each bound to its RunOptions field: a new
// RunOptions field becomes an mpirun option with one more line here.
void add_run_options(CLI::App* cmd, Options& o) {
  RunOptions& r = o.launch.run;
  add_debug_options(cmd, o.debug);  // the same debugging options as `touchstone run`
  cmd->add_option("--seed", r.seed, "seed of every random choice of the model and algorithms")
      ->check(number_in<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))
      ->capture_default_str();
  cmd->add_flag("--phantom", r.phantom_payloads,
                "phantom payloads: sizes only, no bytes moved (only for programs that never read what they receive)");
  r.host_cores = available_host_cores();
  cmd->add_option("--host-cores", r.host_cores, kHostCoresHelp)->check(number_in(1, 4096));
  cmd->add_option("--parallel-programs-from-us", r.parallel_programs_from_us, kParallelProgramsHelp)
      ->check(number_in(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--execution", o.execution, "how VPs run: fibers (fast) or threads; results are identical")
      ->check(CLI::IsMember({"fibers", "threads"}))
      ->capture_default_str();
  cmd->add_option("--time-limit", o.time_limit_s, "virtual seconds after which a run is stopped as an error")
      ->check(time_limit_seconds())
      ->capture_default_str();
  cmd->add_option("--stack-kb", o.stack_kb, "host stack of each VP (KiB): the program's main runs on it")
      ->check(number_in<std::size_t>(64, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--wall-limit", o.wall_limit_s,
                  "host seconds a rank may run without calling MPI (or the run may go without progress) before the "
                  "run is ended, naming the rank and its stack; 0: no limit")
      ->check(number_in(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--compute", o.compute,
                  "what the program's computation between MPI calls costs in virtual time: zero (deterministic), or "
                  "host[:FACTOR], the rank's host CPU time times FACTOR (1 when not given; not deterministic)")
      ->capture_default_str();
  cmd->add_option("--eager-limit", o.eager_limit,
                  "flow control (docs/model.md 2.16), as the machine option eager_limit=: messages above BYTES go by "
                  "rendezvous; unlimited (only a full buffer= does), or off; default: the machine's");
}

// --compute: zero, host or host:FACTOR (a positive decimal number).
double compute_factor(const std::string& text) {
  if (text == "zero") return 0;
  if (text == "host") return 1;
  if (text.rfind("host:", 0) == 0) {
    const auto v = number_from_text<double>(text.substr(5));
    if (v && *v > 0 && *v <= 1e9) return *v;
  }
  throw UsageError(
      fmt::format("--compute: expected zero, host or host:FACTOR with FACTOR a positive number, got '{}'", text));
}

// mpirun's --help in plain words: each option's value named (FILE, N, SECONDS), no validator
// notation, and the default after the description.
class PlainHelp : public CLI::Formatter {
 public:
  // Without CLI11's "{false}" after a flag's name (its value when given).
  std::string make_option_name(const CLI::Option* opt, bool positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, positional);
    for (std::size_t open; (open = name.find('{')) != std::string::npos;)
      name.erase(open, name.find('}', open) - open + 1);
    return name;
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    return is_flag(opt) ? "" : " VALUE";
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string d = opt->get_description();
    if (!is_flag(opt) && !opt->get_default_str().empty()) d += fmt::format(" (default {})", opt->get_default_str());
    return d;
  }

 private:
  static bool is_flag(const CLI::Option* opt) {
    return opt->get_items_expected_max() == 0 || opt->get_type_size_max() == 0;
  }
};

// The value names of mpirun's options in --help.
void name_values(CLI::App* cmd) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"--machine", "SPEC"}, {"--np", "P"}, {"--coll", "COLL=ALG,..."}, {"--plugin", "PATH"}, {"--trace", "FILE"}, {"--order-log", "FILE"},
      {"--perturb", "N"}, {"--races", "[=error|=error-all]"}, {"--explore", "N"},
      {"--schedule", "RANK:CALL=SOURCE,..."},
      {"--seed", "N"}, {"--host-cores", "N"}, {"--parallel-programs-from-us", "US"},
      {"--execution", "fibers|threads"}, {"--time-limit", "SECONDS"},
      {"--stack-kb", "KIB"}, {"--wall-limit", "SECONDS"}, {"--compute", "zero|host[:FACTOR]"},
      {"--eager-limit", "BYTES|unlimited|off"}};
  for (const auto& [name, value] : kNames)
    if (CLI::Option* opt = cmd->get_option_no_throw(name)) opt->option_text(value);
  cmd->formatter(std::make_shared<PlainHelp>());
}

std::string coll_help() {
  std::string h = "collective algorithms, COLL=ALG,... (first = default; N an integer, X a real number):";
  for (const auto& [c, algs] : mpi::collective_algorithms()) h += fmt::format("\n  {}: {}", c, fmt::join(algs, ", "));
  return h;
}

int run(Options& o, CLI::App* cmd) {
  auto rest = cmd->remaining();
  if (rest.empty()) throw UsageError("mpirun: name the program to run (./prog args...)");
  o.launch.program = rest[0];
  o.launch.args.assign(rest.begin() + 1, rest.end());
  load_plugins(o.plugins);  // before --coll's names are looked up
  // COLL=ALG items, comma-separated; a piece without '=' continues the previous algorithm's name
  // (alltoall=2-lev-c,r).
  for (const auto& list : o.coll) {
    std::vector<std::string> items;
    std::size_t at = 0;
    while (at <= list.size()) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      std::string piece = list.substr(at, comma - at);
      if (piece.find('=') == std::string::npos && !items.empty())
        items.back() += "," + piece;
      else
        items.push_back(std::move(piece));
      at = comma + 1;
    }
    for (const auto& item : items) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
        throw UsageError(fmt::format("--coll: expected COLLECTIVE=ALGORITHM, got '{}'", item));
      o.launch.coll[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  apply_debug_options(o.debug, o.launch.run);
  // Exploring re-runs the program, each run in a fresh process (explored_run): an MPI program's
  // globals and MPI session are made once per process. This process makes the original run for
  // the user; the exploration replays it in a child too, to compare output made the same way.
  const int explore_runs = exploring_runs(o.debug);
  DebugOptions findings_options = o.debug;
  findings_options.explore = 0;  // explored below, not in process
  findings_options.races = o.debug.races.empty() ? "" : "report";
  if (explore_runs > 0 && o.launch.run.races == RaceCheck::off) o.launch.run.races = RaceCheck::report;
  std::vector<Race> races_found;  // --explore-outcome: the races, also of a failed run
  const RunResult* completed = nullptr;
  if (!o.explore_outcome.empty()) o.launch.run.on_races = [&](const std::vector<Race>& r) { races_found = r; };
  o.launch.on_result = [&](const Machine& m, const RunResult& r, const RunOptions& used) {
    // A split run's processes all end with the run's findings (--explain): process 0 prints them.
    if (used.partition && used.partition->index() != 0) return;
    fmt::print(stderr, "{}", debug_findings(findings_options, m, Program{}, used, r).text);
    if (!o.explore_outcome.empty()) write_outcome(o.explore_outcome, races_found, &r), completed = &r;
  };
  if (o.check) {
    if (!o.eager_limit.empty())
      throw UsageError("--check runs every standard-mode send synchronously (eager limit 0): drop --eager-limit");
    o.eager_limit = "0";
    o.launch.synchronizing_collectives = true;
    o.launch.leaks_are_errors = true;
  }
  o.launch.run.execution = o.execution == "threads" ? Execution::threads : Execution::fibers;
  o.launch.run.time_limit = time_limit_ps(o.time_limit_s);
  o.launch.run.stack_bytes = o.stack_kb * 1024;
  o.launch.run.wall_limit_s = o.wall_limit_s;
  o.launch.run.eager_limit = eager_limit_bytes(o.eager_limit);
  o.launch.compute_factor = compute_factor(o.compute);
  o.launch.machine = MachineSpec::parse(o.machine);
  if (!o.split_pipe.empty()) {
    if (explore_runs > 0) throw UsageError("touchstone-distributed: --explore makes runs of one process each");
    o.launch.run.partition = pipe_partition(o.split_pipe);
  }
  // This process runs the program once (explored runs are processes of their own): its exit
  // unloads the copies at once, where dlclose one by one takes time in the square of the ranks.
  o.launch.unload_program = false;
  const int rc = mpi::launch(o.launch);
  if (!o.explore_outcome.empty() && !completed) write_outcome(o.explore_outcome, races_found, nullptr);
  // A split run's processes all end with the run's status; the first one speaks for the job.
  const bool speaks = !o.launch.run.partition || o.launch.run.partition->index() == 0;
  if (o.check && rc == 2 && speaks)
    fmt::print(stderr, "touchstone mpirun --check: standard-mode sends were synchronous and blocking collectives "
                       "synchronizing, as a conforming MPI may make them: a deadlock reported above can happen on "
                       "such an MPI\n");
  if (explore_runs == 0) return rc;
  const std::filesystem::path dir(make_temporary_folder("touchstone-explore-"));
  int number = 0;
  Exploration e;
  try {
    e = explore([&](const std::vector<ForcedMatch>& schedule) { return explored_run(schedule, dir, number++); },
                o.launch.run.schedule, explore_runs);
  } catch (...) {
    std::filesystem::remove_all(dir);
    throw;
  }
  std::filesystem::remove_all(dir);
  fmt::print(stderr, "{}", describe_exploration(e, explore_runs));
  return rc != 0 ? rc : other_outcomes(e) ? 3 : 0;
}

}  // namespace

Subcommand add_mpirun(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("mpirun", "run an MPI program (built with touchstone-mpicc) on every VP of a machine");
  cmd->prefix_command();  // everything from the program on is the program's
  add_machine_option(cmd, o->machine);
  cmd->add_option("-n,--np", o->launch.np, "MPI processes, on VPs 0..np-1 (default: every VP)")
      ->check(number_in(1, 1 << 24));
  cmd->add_option("--coll", o->coll, coll_help())->allow_extra_args(false);  // one value per --coll
  add_plugin_option(cmd, o->plugins);
  cmd->add_option("--coll-selector", o->launch.coll_selector,
                  "who picks each call's algorithm where --coll names none: default (the first of each list "
                  "above), mpich (MPICH's decision rules and default thresholds) or ompi (Open MPI's tuned "
                  "fixed decision rules), by communicator size, message size and operator")
      ->check(CLI::IsMember({"default", "mpich", "ompi"}));
  cmd->add_flag("!--no-privatize", o->launch.privatize,
                "share the program's global variables between ranks (default: one copy per rank)");
  cmd->add_flag("--tag-output", o->launch.tag_output, "prefix every line a rank writes to stdout with \"[rank] \"");
  cmd->add_flag("--summary", o->launch.summary,
                "print makespan, messages and trace_hash to stderr when the run ends, however it ends");
  cmd->add_option("--result", o->launch.result_file,
                  "write how the run ended to FILE as JSON: exit status, makespan, the regions marked with "
                  "MPI_Pcontrol(1) ... MPI_Pcontrol(0), messages, trace_hash");
  cmd->add_flag("!--no-check", o->launch.check_consistency,
                "do not check that collectives match across ranks nor that messages' type signatures match their "
                "receives (docs/debugging.md; for measuring what the checks cost)");
  add_run_options(cmd, *o);
  cmd->add_flag("--check", o->check,
                "the strict check (docs/debugging.md): find deadlocks that a conforming MPI may produce (every "
                "standard-mode send synchronous, eager limit 0, and every blocking collective synchronizing: no "
                "member leaves before all have entered), reported with the calls that block; and make "
                "MPI_Finalize's findings (communicators, groups, datatypes, operations, buffers and requests still "
                "held) errors that end the run, not warnings");
  cmd->add_option("--split-pipe", o->split_pipe, "(internal: touchstone-distributed's pipes, R,W,PROCESS,PROCESSES)")
      ->group("");
  cmd->add_option("--explore-outcome", o->explore_outcome, "(internal: an explored run writes its outcome here)")
      ->group("");
  name_values(cmd);
  return Subcommand{cmd, [o, cmd] { return run(*o, cmd); }};
}

void normalize_mpirun_args(int argc, char** argv) {
  static char np[] = "--np";
  if (argc < 2 || std::string(argv[1]) != "mpirun") return;
  command_line().assign(argv, argv + argc);
  for (int i = 2; i < argc; ++i) {
    std::error_code ec;
    if (std::string(argv[i]) == "--plugin") {  // its value is a file, and not the program
      ++i;
      continue;
    }
    if (std::filesystem::is_regular_file(argv[i], ec)) return;  // the program: the rest is its own
    if (std::string(argv[i]) == "-np") argv[i] = np;
  }
}

}  // namespace touchstone::cli
