// `touchstone list machines|algorithms`: the machine grammar with every option, or the catalog.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "algorithms/registry.hpp"
#include "cli/command.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::cli {

Subcommand add_list(CLI::App& app) {
  auto what = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("list", "list machines or algorithms");
  cmd->add_option("what", *what, "machines or algorithms")
      ->required()
      ->check(CLI::IsMember({"machines", "algorithms"}));
  return Subcommand{cmd, [what] {
                      if (*what == "machines") {
                        for (const auto& [k, v] : machine_presets()) fmt::print("{:<24} {}\n", k, v);
                      } else {
                        for (const auto& a : algorithms::catalog()) fmt::print("{:<26} {}\n", a.name, a.summary);
                      }
                      return 0;
                    }};
}

}  // namespace touchstone::cli
