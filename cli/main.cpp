// The touchstone command line (docs/cli.md): the table of subcommands, one file each in cli/.
#include <array>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/debug_options.hpp"
#include "cli/parse_command_line.hpp"

namespace {

// In the order --help lists them.
constexpr std::array kCommands{&touchstone::cli::add_list,   &touchstone::cli::add_run,
                               &touchstone::cli::add_sweep,  &touchstone::cli::add_table,
                               &touchstone::cli::add_plot,   &touchstone::cli::add_loads,
                               &touchstone::cli::add_mpirun, &touchstone::cli::add_diff};

}  // namespace

int main(int argc, char** argv) {
  using namespace touchstone::cli;
  CLI::App app{"Touchstone: emulates distributed-memory parallel machines on one workstation, in exact virtual time"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "touchstone 0.1.0");
  std::vector<Subcommand> commands;
  for (const auto add : kCommands) commands.push_back(add(app));
  // CLI11 only says "A subcommand is required" for a misspelled command: name it and the known ones.
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const Subcommand& c : commands) {
      found |= c.app->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + c.app->get_name();
    }
    if (!found) {
      fmt::print(stderr, "error: unknown command '{}' (known: {}; see --help)\n", argv[1], known);
      return 1;
    }
  }
  normalize_mpirun_args(argc, argv);
  normalize_sweep_args(argc, argv);
  if (const auto code = parse_command_line(app, argc, argv)) return *code;
  try {
    for (const Subcommand& c : commands)
      if (*c.app) return c.run();
  } catch (const std::exception& e) {
    return report_failure(e);
  }
  return 0;
}
