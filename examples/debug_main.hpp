// The command line of the bug examples: a machine and the debugging options of `touchstone run`
// (cli/debug_options.hpp), so that every tool of docs/debugging.md works on them.
#pragma once
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <touchstone/touchstone.hpp>

#include "cli/debug_options.hpp"
#include "cli/parse_command_line.hpp"

inline int debug_main(int argc, char** argv, const char* what, std::string machine, const touchstone::Program& program) {
  using namespace touchstone;
  CLI::App app{what};
  cli::DebugOptions debug;
  std::string execution = "fibers";
  app.add_option("--machine", machine, "machine spec")->capture_default_str();
  app.add_option("--execution", execution, "how VPs run: fibers or threads (one OS thread per VP); results are identical")
      ->check(CLI::IsMember({"fibers", "threads"}))
      ->capture_default_str();
  cli::add_debug_options(&app, debug);
  if (const auto exit_code = cli::parse_command_line(app, argc, argv)) return *exit_code;
  try {
    const Machine m = parse_machine(machine);
    RunOptions o;
    cli::apply_debug_options(debug, o);
    o.execution = execution == "threads" ? Execution::threads : Execution::fibers;
    const RunResult r = run(m, program, o);
    fmt::print("completed on {}: makespan {} us, {} messages, trace hash {:016x}\n", m.name, to_us(r.makespan),
               r.stats.messages, r.trace_hash);
    const cli::Findings f = cli::debug_findings(debug, m, program, o, r);
    fmt::print("{}", f.text);
    return f.other_outcomes ? 3 : 0;
  } catch (const Error& e) {
    return cli::report_failure(e);
  }
}
