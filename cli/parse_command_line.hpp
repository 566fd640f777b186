// One way for every Touchstone program (touchstone and the paper programs) to refuse a command line
// (docs/cli.md, "Exit codes"): CLI11's own errors (an unknown option, a missing value, a value a
// check refuses, a missing subcommand) are printed like every other error, as
// `error: MESSAGE (see PROGRAM COMMAND --help)` on stderr, and exit 1. CLI11 alone prints the bare
// message and "Run with --help for more information.", and CLI11_PARSE exits with CLI11's own codes
// (105, 106, 109...), which docs/cli.md does not list.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace touchstone::cli {

/// Parses argv into `app`. Returns nothing when the program goes on, or the code it must exit with
/// now: 0 after --help or --version (printed by CLI11), 1 after a parse error (printed as above).
/// `speaks` false: the same codes, nothing printed (the processes of a split run but the first).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, bool speaks = true) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return speaks ? app.exit(e) : 0;  // --help, --version
    if (!speaks) return 1;
    // The command the error belongs to: the program's file name and the subcommands given so far
    // (CLI11 records a subcommand before it parses the subcommand's options).
    std::string command = std::filesystem::path(argc > 0 ? argv[0] : "touchstone").filename().string();
    for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
      at = at->get_subcommands().front();
      command += " " + at->get_name();
    }
    fmt::print(stderr, "error: {} (see {} --help)\n", e.what(), command);
    return 1;
  }
}

}  // namespace touchstone::cli
