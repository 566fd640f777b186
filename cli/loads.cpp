// `touchstone loads`: the link loads of the permutation schedules (paper 000, section 5.1).
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "algorithms/permutations.hpp"
#include "cli/command.hpp"
#include "cli/common_options.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/touchstone.hpp"

namespace touchstone::cli {

namespace {

struct Options {
  std::string machine = kDefaultMachine, format = "table";
};

// Paper 000, section 5.1: max_load and sum_load of the linear, exclusive-or and balanced
// permutation schedules of the whole machine, routed by the machine's own route function. Beside
// them, on a square mesh whose side is a multiple of 4, the figures the paper states.
int loads(const std::string& machine, const std::string& format) {
  const Machine m = build_machine(MachineSpec::parse(machine));
  const int p = m.nodes();
  const auto dims = m.topology->dims();
  const bool paper = dims.size() == 2 && dims[0] == dims[1] && dims[0] % 4 == 0;
  const double side = paper ? dims[0] : 0, p32 = side * side * side;
  struct Row {
    std::string name;
    std::vector<int> shape;
    double paper_max, paper_sum;  // 0: the paper gives no figure
  };
  const std::vector<Row> rows{{"linear", {p}, side / 2, 0},
                              {"xor", {p}, side / 2, 3.0 / 7.0 * p32},
                              {"balanced", dims.empty() ? std::vector<int>{p} : dims, side / 4, p32 / 4}};
  nlohmann::json arr = nlohmann::json::array();
  std::string text =
      fmt::format("{} ({} processors): link loads of permutation schedules (paper 000, sec. 5.1)\n", m.name, p);
  text += fmt::format("{:<10} {:>12} {:>9} {:>10} {:>15} {:>15}\n", "schedule", "permutations", "max_load", "sum_load",
                      "paper max_load", "paper sum_load");
  std::string csv = "machine,schedule,permutations,max_load,sum_load,paper_max_load,paper_sum_load\n";
  auto fig = [](double x) { return x > 0 ? fmt::format("{:g}", x) : std::string("-"); };
  for (const auto& r : rows) {
    const auto& s = algorithms::shared_schedule(r.name, r.shape);
    const auto l = algorithms::schedule_loads(s, *m.topology);
    text += fmt::format("{:<10} {:>12} {:>9} {:>10} {:>15} {:>15}\n", r.name, s.size(), l.max_load, l.sum_load,
                        fig(r.paper_max), fig(r.paper_sum));
    csv += experiment::csv_line({m.name, r.name, std::to_string(s.size()), std::to_string(l.max_load),
                                 std::to_string(l.sum_load), r.paper_max > 0 ? fig(r.paper_max) : "",
                                 r.paper_sum > 0 ? fig(r.paper_sum) : ""});
    nlohmann::json j{{"machine", m.name},
                     {"schedule", r.name},
                     {"vps", p},
                     {"permutations", s.size()},
                     {"max_load", l.max_load},
                     {"sum_load", l.sum_load},
                     {"per_permutation", l.per_permutation}};
    j["paper_max_load"] = r.paper_max > 0 ? nlohmann::json(r.paper_max) : nlohmann::json(nullptr);
    j["paper_sum_load"] = r.paper_sum > 0 ? nlohmann::json(r.paper_sum) : nlohmann::json(nullptr);
    arr.push_back(std::move(j));
  }
  if (paper)
    text += fmt::format("lower bounds for any partition (paper, [13]): max_load >= {:g}, sum_load >= {:g}\n", side / 4,
                        p32 / 4);
  fmt::print("{}", format == "json" ? arr.dump(2) + "\n" : format == "csv" ? csv : text);
  return 0;
}

}  // namespace

Subcommand add_loads(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "loads",
      "max_load and sum_load of the linear, xor and balanced permutation schedules (paper 000, sec. 5.1): the\n"
      "load of a directed link in a permutation is the number of its messages routed over that link; load(Pi)\n"
      "is the largest over the links; max_load is the largest over the permutations, sum_load their sum");
  add_machine_option(cmd, o->machine);
  cmd->add_option("--format", o->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  return Subcommand{cmd, [o] { return loads(o->machine, o->format); }};
}

}  // namespace touchstone::cli
