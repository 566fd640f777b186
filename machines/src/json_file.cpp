// Machine files: {"topology": "mesh:4x4", "name": "...", "params": {option: value}} (docs/machines.md).
// "params" takes every option a spec could carry: the generic ones and those the topology's family
// claims.
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "family.hpp"
#include "options.hpp"
#include "text.hpp"
#include "touchstone/error.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::machines {
namespace {

std::string value_text(const nlohmann::json& value, const std::string& path, const std::string& key) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean() && value.get<bool>()) return "on";
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  if (value.is_number()) return fmt::format("{}", value.get<double>());
  throw UsageError(fmt::format("machine file '{}': field 'params.{}' must be a number or a string", path, key));
}

Machine make_from_file(const std::string& path, SpecOptions&, const std::string&) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read machine file '{}'", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("machine file '{}' is not valid JSON: {}", path, e.what()));
  }
  auto field = [&](const char* name) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(name))
      throw UsageError(fmt::format("machine file '{}': missing field '{}'", path, name));
    return j.at(name);
  };
  for (const auto& [key, value] : j.items())
    if (key != "topology" && key != "name" && key != "params")
      throw UsageError(fmt::format("machine file '{}': unknown field '{}' (expected topology, name, params)", path, key));
  const auto& topo = field("topology");
  if (!topo.is_string())
    throw UsageError(fmt::format("machine file '{}': field 'topology' must be a string such as \"mesh:4x4\"", path));
  const std::string spec = topo.get<std::string>();
  const nlohmann::json params = j.contains("params") ? j["params"] : nlohmann::json::object();
  if (!params.is_object()) throw UsageError(fmt::format("machine file '{}': field 'params' must be an object", path));
  // The params the topology's family claims join the spec's own options; the generic ones are
  // applied after, one by one, so that an error names its field.
  const auto head = split(spec, ',')[0];
  const Family& family = find_family(head.substr(0, head.find(':')), spec);
  std::string full = spec;
  std::vector<std::pair<std::string, std::string>> generic;
  for (const auto& [key, value] : params.items()) {
    const std::string v = value_text(value, path, key);
    if (claims(family, key)) full += fmt::format(",{}={}", key, v);
    else generic.emplace_back(key, v);
  }
  Machine m;
  try {
    m = parse_machine(full);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("machine file '{}': {}", path, e.what()));
  }
  if (j.contains("name")) {
    if (!j["name"].is_string()) throw UsageError(fmt::format("machine file '{}': field 'name' must be a string", path));
    m.name = j["name"].get<std::string>();
  }
  for (const auto& [key, v] : generic) {
    try {
      apply_option(m, key, v);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("machine file '{}': field 'params.{}': {}", path, key, e.what()));
    }
  }
  return m;
}

}  // namespace

const Family json_file_family{"", "FILE.json",
                              "a machine file: {\"topology\": \"mesh:4x4\", \"name\": ..., \"params\": {option: value}}",
                              {}, make_from_file};

}  // namespace touchstone::machines
