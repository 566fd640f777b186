// Machine files: {"topology": "mesh:4x4", "name": "...", "params": {option: value}} (docs/machines.md).
// "params" takes every option a spec could carry: the generic ones and those the topology's family
// claims.
#include <filesystem>
#include <fstream>
#include <vector>

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

// The machine files being read on this thread, outermost first: a file whose topology names a
// file being read would recurse forever.
thread_local std::vector<std::string> reading;

struct Reading {
  explicit Reading(const std::string& path) {
    std::error_code ec;
    const std::string id = std::filesystem::weakly_canonical(path, ec).string();
    for (const auto& r : reading)
      if (r == id) {
        std::string chain;
        for (const auto& x : reading) chain += x + " -> ";
        throw UsageError(fmt::format("machine file '{}' names itself through its topology: {}{}", path, chain, id));
      }
    reading.push_back(id);
  }
  ~Reading() { reading.pop_back(); }
  Reading(const Reading&) = delete;
  Reading& operator=(const Reading&) = delete;
};

}  // namespace

Machine file_machine(const std::string& path, SpecOptions&, const std::string&) {
  const std::string text = read_small_file("machine file", path);
  const Reading guard(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax errors, and numbers out of range (1e400)
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
  const nlohmann::json params = j.contains("params") ? j["params"] : nlohmann::json::object();
  if (!params.is_object()) throw UsageError(fmt::format("machine file '{}': field 'params' must be an object", path));
  // The params the topology's family claims join the spec's own options; the generic ones are
  // applied after, one by one, so that an error names its field.
  // A topology that is itself a machine file takes only generic params on top of it.
  std::vector<std::pair<std::string, std::string>> generic;
  Machine m;
  try {
    MachineSpec spec = MachineSpec::parse(topo.get<std::string>());
    const Family& family = spec.is_file() ? file_family() : find_family(spec.family, spec.text());
    for (const auto& [key, value] : params.items()) {
      std::string v = value_text(value, path, key);
      if (claims(family, key)) spec.options.push_back({key, std::move(v)});
      else generic.emplace_back(key, std::move(v));
    }
    m = build_machine(spec);
  } catch (const UsageError& e) {
    const std::string what = e.what();
    if (what.rfind("machine file '", 0) == 0) throw;  // an inner file's error already names it
    throw UsageError(fmt::format("machine file '{}': {}", path, what));
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

}  // namespace touchstone::machines
