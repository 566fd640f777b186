// The machine files docs/examples/ shows users load as the docs say: a machine file by its path,
// a switch network file through switchnet:, each with the figures its page states.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/scratch.hpp"
#include "touchstone/topologies/switch_network.hpp"
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

// Every family option the docs list for `params` works there (placement, seed, Q; deadlock
// above), with the same effect as written in the spec.
TEST(DocsExamples, JsonParamsTakePlacementSeedAndQ) {
  auto from_file = [](const std::string& json) {
    const auto path = ts_test::scratch_path("touchstone_params_options.json");
    std::ofstream(path) << json;
    Machine m = parse_machine(path.string());
    std::filesystem::remove(path);
    return m;
  };
  const Machine placed = from_file(R"({"topology": "switch:8", "params": {"placement": "random", "seed": 5}})");
  const Machine spec = parse_machine("switch:8,placement=random,seed=5");
  const auto* a = dynamic_cast<const SwitchNetwork*>(placed.topology.get());
  const auto* b = dynamic_cast<const SwitchNetwork*>(spec.topology.get());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->layout().placement, b->layout().placement);
  EXPECT_NE(a->layout().placement, dynamic_cast<const SwitchNetwork&>(*parse_machine("switch:8").topology).layout().placement);
  const Machine q = from_file(R"({"topology": "hpam:2x2/2x2", "params": {"Q": 3}})");
  const Machine q_spec = parse_machine("hpam:2x2/2x2,Q=3");
  ASSERT_EQ(q.node_costs.size(), q_spec.node_costs.size());
  ASSERT_FALSE(q.node_costs.empty());
  for (std::size_t i = 0; i < q.node_costs.size(); ++i)
    EXPECT_EQ(q.node_costs[i].send_overhead, q_spec.node_costs[i].send_overhead) << i;
  EXPECT_NE(q.node_costs.back().send_overhead, parse_machine("hpam:2x2/2x2").node_costs.back().send_overhead);
}

TEST(DocsExamples, JsonParamsTakeTheFamilysOwnOptions) {
  const auto path = ts_test::scratch_path("touchstone_params_family.json");
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

namespace {

// Bad machine input is a clear error naming it, never a crash or a silently wrong number
// (the cases that the machine catalog owns).
std::string machine_error(const std::string& spec) {
  try {
    parse_machine(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << spec << " was accepted";
  return {};
}

std::string write_file(const std::string& name, const std::string& text) {
  const auto path = ts_test::scratch_path(name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(MachineInput, FilesNamingThemselvesAreRefusedWithTheChain) {
  const std::string a = write_file("ts_cycle_a.json", "");
  const std::string b = write_file("ts_cycle_b.json", R"({"topology": ")" + a + R"("})");
  write_file("ts_cycle_a.json", R"({"topology": ")" + b + R"("})");
  const std::string e = machine_error(a);
  EXPECT_NE(e.find("names itself"), std::string::npos) << e;
  EXPECT_NE(e.find("ts_cycle_b.json ->"), std::string::npos) << e;
  const std::string self = write_file("ts_cycle_self.json", "");
  write_file("ts_cycle_self.json", R"({"topology": ")" + self + R"("})");
  EXPECT_NE(machine_error(self).find("names itself"), std::string::npos);
}

TEST(MachineInput, JsonNumberOverflowNamesTheFile) {
  const std::string f = write_file("ts_overflow.json", R"({"topology": "mesh:2x2", "params": {"hop_ns": 1e400}})");
  const std::string e = machine_error(f);
  EXPECT_NE(e.find("ts_overflow.json"), std::string::npos) << e;
}

TEST(MachineInput, OnlyRegularFilesAreRead) {
  EXPECT_NE(machine_error("/dev/zero.json").find("no such file"), std::string::npos);
  const auto dir = ts_test::scratch_path("ts_dir.json").string();
  std::filesystem::create_directories(dir);
  EXPECT_NE(machine_error(dir).find("not a regular file"), std::string::npos);
}

// Files are read only up to a size cap (1 MiB for machine and switch network files): a larger one is
// refused before it is read. A sparse file, so the test writes nothing.
TEST(MachineInput, FilesLargerThanTheCapAreRefusedUnread) {
  const std::string big = write_file("ts_big_machine.json", "{");
  std::filesystem::resize_file(big, (std::size_t{1} << 20) + 1);
  std::string e = machine_error(big);
  EXPECT_NE(e.find("ts_big_machine.json' is larger than 1048576 bytes"), std::string::npos) << e;
  e = machine_error("switchnet:" + big);
  EXPECT_NE(e.find("ts_big_machine.json' is larger than 1048576 bytes"), std::string::npos) << e;
  std::filesystem::resize_file(big, std::size_t{1} << 20);  // at the cap: read, and refused as JSON
  e = machine_error(big);
  EXPECT_EQ(e.find("is larger than"), std::string::npos) << e;
  EXPECT_NE(e.find("ts_big_machine.json"), std::string::npos) << e;
}

TEST(MachineInput, TimesThatRoundToZeroOrCouldOverflowAreRefused) {
  // 1e-9 ns per byte is 1e-6 ps: it used to round to 0, i.e. infinite bandwidth.
  EXPECT_NE(machine_error("mesh:2x2,link_ns_per_byte=1e-9").find("rounds to 0 ps"), std::string::npos);
  EXPECT_EQ(parse_machine("mesh:2x2,link_ns_per_byte=0").net.link_byte_time, 0);
  EXPECT_EQ(parse_machine("mesh:2x2,link_ns_per_byte=0.001").net.link_byte_time, 1);
  // 4 bytes x 2^62 ps wrapped to 0: per-byte times are capped at 1 ms (x 2^30 bytes < 2^63 ps).
  EXPECT_NE(machine_error("mesh:1x2,send_ns_per_byte=4611686018427387.904").find("largest value allowed"),
            std::string::npos);
  EXPECT_EQ(parse_machine("mesh:1x2,send_ns_per_byte=1000000").costs.send_per_byte, milliseconds(1));
  EXPECT_NE(machine_error("mesh:1x2,send_us=2000000000").find("largest value allowed"), std::string::npos);
}

}  // namespace

namespace {
TEST(MachineInput, SwitchNetworkFilesMustBeSmallRegularFiles) {
  std::string e;
  try {
    parse_machine("switchnet:/dev/zero");
  } catch (const UsageError& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
}
}  // namespace

namespace {
// Switch network files' integers never wrap, and their sizes are capped.
std::string switchnet_error(const std::string& json) {
  static int n = 0;
  const auto path = ts_test::scratch_path("ts_switchnet_" + std::to_string(n++) + ".json").string();
  std::ofstream(path) << json;
  try {
    parse_machine("switchnet:" + path);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << json;
  return {};
}

TEST(MachineInput, SwitchNetworkNumbersAreRangeChecked) {
  // 4294967297 = 2^32 + 1 was silently taken as 1 port.
  std::string e = switchnet_error(R"({"ports": 4294967297, "nodes": [1, 1], "links": [[0, 1]]})");
  EXPECT_NE(e.find("field 'ports' holds 4294967297, outside 1..4096"), std::string::npos) << e;
  e = switchnet_error(R"({"ports": 8, "nodes": [2147483647, 2147483647], "links": [[0, 1]]})");
  EXPECT_NE(e.find("field 'nodes' holds 2147483647"), std::string::npos) << e;
  e = switchnet_error(R"({"ports": 100000000, "nodes": [1]})");
  EXPECT_NE(e.find("outside 1..4096"), std::string::npos) << e;
  // Routing's table holds 2 x switches^2 hop counts: 65536 switches would need 32 GiB.
  std::string many = R"({"ports": 8, "nodes": [1)";
  for (int s = 1; s < 4097; ++s) many += ", 1";
  e = switchnet_error(many + "]}");
  EXPECT_NE(e.find("more than 4096 switches"), std::string::npos) << e;
  e = switchnet_error(R"({"ports": 8, "nodes": [1, 1], "links": [[0, -1]]})");
  EXPECT_NE(e.find("field 'links' holds -1"), std::string::npos) << e;
  e = switchnet_error(R"({"ports": 8, "nodes": [1, 1], "links": [[0, 18446744073709551615]]})");
  EXPECT_NE(e.find("field 'links' holds 18446744073709551615"), std::string::npos) << e;
}

// Found by fuzz_switchnet: a JSON number out of range escaped as nlohmann's out_of_range exception.
TEST(MachineInput, SwitchNetworkJsonNumberOverflowIsAUsageError) {
  const std::string e = switchnet_error(R"({"ports": 8, "nodes": [1e400]})");
  EXPECT_NE(e.find("is not valid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("ts_switchnet_"), std::string::npos) << e;
}
}  // namespace

namespace {
// Found by fuzz_machine_spec: integers were read with std::stoll, which skips leading white space.
TEST(MachineInput, IntegersAreWholeDecimalsWithoutWhiteSpace) {
  EXPECT_THROW(parse_machine("mesh:12x\r\r4"), UsageError);
  EXPECT_THROW(parse_machine("mesh:2x 2"), UsageError);
  EXPECT_THROW(parse_machine("mesh:+2x2"), UsageError);
  EXPECT_EQ(parse_machine("mesh:12x4").nodes(), 48);
}
}  // namespace

namespace {
// Found while profiling fuzz_machine_spec: one switch drew its wanted link count from
// 1..0, a division by zero (SIGFPE), so links=0-0 on one switch crashed the program.
TEST(MachineInput, IrregularOneSwitchNeedsNoLinks) {
  const Machine m = parse_machine("irregular:switches=1,nodes=3-3,links=0-0");
  EXPECT_EQ(m.nodes(), 3);
  EXPECT_EQ(m.topology->link_channels(), 0u);
}

// fuzz_machine_spec's slowest inputs (12-20 s each under the fuzzer): link counts no network can
// have made the generator try 10000 networks before refusing. They are now refused at once with
// the reason.
TEST(MachineInput, IrregularImpossibleLinkCountsAreRefusedWithTheReason) {
  std::string e = machine_error("irregular:switches=10,nodes=3-3,links=22-22");
  EXPECT_NE(e.find("a switch has at most 18 links (parallel=2 to each of the 9 others)"), std::string::npos) << e;
  e = machine_error("irregular:switches=3,nodes=1-2,links=1-1");
  EXPECT_NE(e.find("3 switches cannot be connected with at most 1 link each"), std::string::npos) << e;
  e = machine_error("irregular:switches=5,nodes=1-2,links=3-3");
  EXPECT_NE(e.find("5 switches cannot all have exactly 3 links"), std::string::npos) << e;
  // Still valid: two switches with one link each, and 4 switches with exactly 3 links (K4).
  EXPECT_EQ(parse_machine("irregular:switches=2,nodes=1-1,links=1-1").topology->link_channels(), 2u);
  EXPECT_EQ(parse_machine("irregular:switches=4,nodes=1-1,links=3-3,parallel=1").topology->link_channels(), 12u);
}

// switches x nodes overflowed an int in the total=P check (4096 x 2^20 = 2^32).
TEST(MachineInput, IrregularNodeTotalsDoNotOverflow) {
  const std::string e = machine_error("irregular:switches=4096,nodes=1048576-1048576,links=1-5,total=5");
  EXPECT_NE(e.find("5 nodes cannot be spread over 4096 switches"), std::string::npos) << e;
}

// Making the generator fast must not change the networks it draws: paper 004's setting, seeds 1
// and 4, as the generator drew them before (links, then nodes per switch).
TEST(MachineInput, IrregularGeneratorDrawsTheSameNetworksAsBefore) {
  auto drawn = [](std::uint64_t seed) {
    IrregularSpec g;
    g.switches = 10, g.nodes_lo = 7, g.nodes_hi = 21, g.links_lo = 1, g.links_hi = 5, g.parallel = 2, g.total = 128;
    g.seed = seed;
    const SwitchLayout l = generate_irregular(g);
    std::ostringstream s;
    for (const auto& [a, b] : l.links) s << ' ' << a << '-' << b;
    for (const int n : l.nodes_per_switch) s << ' ' << n;
    return s.str();
  };
  EXPECT_EQ(drawn(1), " 0-1 1-6 1-7 1-9 2-4 2-6 2-8 3-4 3-6 3-9 4-6 5-6 13 8 12 13 14 11 15 12 14 16");
  EXPECT_EQ(drawn(4), " 0-3 1-6 1-7 2-3 2-4 2-8 3-6 4-5 4-9 5-7 6-9 7-8 7-9 8-9 12 16 14 13 14 10 14 10 13 12");
}
}  // namespace

namespace {
// The up*/down* hop counts come from a backward breadth-first search (relaxing every
// channel until nothing changed made a 500-switch network time out fuzz_machine_spec, input
// found_irregular_500_switches_timeout). They must equal that relaxation, done here by hand:
// d(a, ph) = min over channels a -> b allowed in phase ph of d(b, up ? 0 : 1) + 1.
TEST(SwitchRouting, HopCountsEqualARelaxationOfEveryChannel) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    IrregularSpec g;
    g.switches = 6 + static_cast<int>(seed) * 3, g.nodes_lo = 1, g.nodes_hi = 2, g.links_lo = 1, g.links_hi = 4;
    g.parallel = 2, g.seed = seed;
    const auto net = make_switch_network(generate_irregular(g));
    const int S = net->switches();
    auto is_up = [&](LinkId c) {
      const int a = net->channel_from(c), b = net->channel_to(c);
      return net->level(b) < net->level(a) || (net->level(b) == net->level(a) && b < a);
    };
    for (int to = 0; to < S; ++to) {
      std::vector<std::array<int, 2>> d(static_cast<std::size_t>(S), {1 << 28, 1 << 28});
      d[static_cast<std::size_t>(to)] = {0, 0};
      for (bool changed = true; changed;) {
        changed = false;
        for (LinkId c = 0; c < net->link_channels(); ++c) {
          const auto a = static_cast<std::size_t>(net->channel_from(c)), b = static_cast<std::size_t>(net->channel_to(c));
          for (int ph = 0; ph < 2; ++ph) {
            if (ph == 1 && is_up(c)) continue;
            auto& here = d[a][static_cast<std::size_t>(ph)];
            if (d[b][is_up(c) ? 0 : 1] + 1 < here) here = d[b][is_up(c) ? 0 : 1] + 1, changed = true;
          }
        }
      }
      for (int at = 0; at < S; ++at) {
        const int here = d[static_cast<std::size_t>(at)][0];
        ASSERT_EQ(net->legal_distance(at, to), here) << "seed " << seed << ": " << at << " -> " << to;
        // From the source switch, forwarding offers exactly the channels one hop closer.
        std::vector<LinkId> closer;
        if (at != to)
          for (LinkId c = 0; c < net->link_channels(); ++c)
            if (net->channel_from(c) == at && d[static_cast<std::size_t>(net->channel_to(c))][is_up(c) ? 0 : 1] + 1 == here)
              closer.push_back(c);
        EXPECT_EQ(net->forwarding(at, kNoLink, to), closer) << "seed " << seed << ": " << at << " -> " << to;
      }
    }
  }
}
}  // namespace
