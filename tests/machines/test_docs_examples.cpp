// The machine files docs/examples/ shows users load as the docs say: a machine file by its path,
// a switch network file through switchnet:, each with the figures its page states.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

const std::filesystem::path kDocsExamples = TOUCHSTONE_DOCS_EXAMPLES;

TEST(DocsExamples, EveryJsonFileLoads) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDocsExamples)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    // A machine file names its topology; any other JSON here is a switch network file.
    const std::string spec = text.str().find("\"topology\"") != std::string::npos ? entry.path().string()
                                                                                  : "switchnet:" + entry.path().string();
    Machine m;
    ASSERT_NO_THROW(m = parse_machine(spec)) << spec;
    EXPECT_GT(m.nodes(), 0) << spec;
  }
  EXPECT_EQ(files, 2);
}

TEST(DocsExamples, FastMeshHasTheParametersItsPageStates) {
  const Machine m = parse_machine((kDocsExamples / "mesh4x4-fast.json").string());
  EXPECT_EQ(m.name, "fast-mesh");
  EXPECT_EQ(m.nodes(), 16);
  EXPECT_EQ(m.net.hop_time, nanoseconds(20));
  EXPECT_EQ(m.net.link_byte_time, nanoseconds(5));
  EXPECT_EQ(m.net.inject_byte_time, nanoseconds(5));
  EXPECT_EQ(m.net.eject_byte_time, nanoseconds(5));
  EXPECT_EQ(m.costs.send_overhead, microseconds(10));  // generic, untouched
}

TEST(DocsExamples, PairsPlacementPutsTwoRanksPerSwitchInTurn) {
  const Machine m = parse_machine("switchnet:" + (kDocsExamples / "switch2-16+16-pairs.json").string());
  const auto* net = dynamic_cast<const SwitchNetwork*>(m.topology.get());
  ASSERT_NE(net, nullptr);
  ASSERT_EQ(m.nodes(), 32);
  EXPECT_EQ(net->switch_of(0), 0);
  EXPECT_EQ(net->switch_of(1), 1);
  EXPECT_EQ(net->switch_of(2), 1);
  EXPECT_EQ(net->switch_of(3), 0);
}

TEST(DocsExamples, JsonParamsTakeTheFamilysOwnOptions) {
  const auto path = std::filesystem::temp_directory_path() / "touchstone_params_family.json";
  {
    std::ofstream out(path);
    out << R"({"topology": "torus:4x4", "params": {"deadlock": "none", "hop_ns": 7}})";
  }
  const Machine m = parse_machine(path.string());
  EXPECT_EQ(m.net.hop_time, nanoseconds(7));
  // deadlock=none: one channel per link direction, so 4 per node (dateline: 8).
  EXPECT_EQ(m.topology->link_channels(), parse_machine("torus:4x4,deadlock=none").topology->link_channels());
  EXPECT_NE(m.topology->link_channels(), parse_machine("torus:4x4").topology->link_channels());
  std::filesystem::remove(path);
}

}  // namespace
