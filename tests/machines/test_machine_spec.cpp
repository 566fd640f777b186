// MachineSpec: a machine spec parsed once into a value (family, argument, options), edited as a
// value, and built into a Machine; its text form round-trips.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

// A spec of every family, with generic options, family options and a bare flag.
const std::vector<std::string> kSpecs = {
    "mesh:16x16",
    "mesh:4x4,ports=all,buffer=4096",
    "torus:8x8x8,deadlock=none,hop_ns=20",
    "delta",
    "delta:16x16,send_us=200,recv_us=33.64",
    "cm5:32",
    "switch:32,placement=random,seed=3",
    "switch2:16+16",
    "irregular:switches=4,nodes=2-4,links=1-3,parallel=2,seed=7",
    "switchnet:net.json",
    "hpam:4x4/16x16,Q=8,multicast",
    "hpam:2x2/4x4,multicast=on",
    "mesh:2x2,hop_ns=1,hop_ns=2",  // a later option overrides an earlier one, and both are kept
    "machines/fast.json",
    "switchnet,seed=1,placement=a.json",  // ends in .json, but names a family: not a file
};

TEST(MachineSpec, TextRoundTripsForEveryFamily) {
  for (const auto& text : kSpecs) {
    const MachineSpec spec = MachineSpec::parse(text);
    EXPECT_EQ(spec.text(), text);
    EXPECT_EQ(MachineSpec::parse(spec.text()), spec) << text;
  }
}

TEST(MachineSpec, ParseSplitsFamilyArgumentAndOptions) {
  const MachineSpec hpam = MachineSpec::parse("hpam:4x4/16x16,Q=8,multicast");
  EXPECT_EQ(hpam.family, "hpam");
  EXPECT_EQ(hpam.argument, "4x4/16x16");
  EXPECT_EQ(hpam.options, (std::vector<MachineOption>{{"Q", "8"}, {"multicast", std::nullopt}}));
  const MachineSpec delta = MachineSpec::parse("delta");
  EXPECT_EQ(delta.family, "delta");
  EXPECT_EQ(delta.argument, "");
  EXPECT_TRUE(delta.options.empty());
  const MachineSpec file = MachineSpec::parse("machines/fast.json");
  EXPECT_TRUE(file.is_file());
  EXPECT_EQ(file.argument, "machines/fast.json");
  // A value may hold '=': everything after the first one.
  EXPECT_EQ(MachineSpec::parse("mesh:2x2,placement=a=b").options, (std::vector<MachineOption>{{"placement", "a=b"}}));
}

TEST(MachineSpec, AValueBuiltByHandRoundTripsThroughItsText) {
  const MachineSpec spec{"torus", "4x4", {{"deadlock", "none"}, {"hop_ns", "20"}}};
  EXPECT_EQ(spec.text(), "torus:4x4,deadlock=none,hop_ns=20");
  EXPECT_EQ(MachineSpec::parse(spec.text()), spec);
  const Machine m = build_machine(spec);
  EXPECT_EQ(m.name, "torus:4x4,deadlock=none,hop_ns=20");
  EXPECT_EQ(m.nodes(), 16);
}

// Parsing checks the grammar only: values are checked, and files read, when the machine is built.
TEST(MachineSpec, ParseChecksTheGrammarBuildChecksTheValues) {
  EXPECT_NO_THROW(MachineSpec::parse("/nonexistent/m.json"));
  EXPECT_THROW(build_machine(MachineSpec::parse("/nonexistent/m.json")), UsageError);
  const MachineSpec fast = MachineSpec::parse("mesh:2x2,hop_ns=fast");
  EXPECT_THROW(build_machine(fast), UsageError);
  EXPECT_THROW(MachineSpec::parse(""), UsageError);
  EXPECT_THROW(MachineSpec::parse("bogus:4"), UsageError);
  EXPECT_THROW(MachineSpec::parse("mesh:4x4,=3"), UsageError);
  try {
    MachineSpec::parse("mesh:4x4,hop_ns");
    ADD_FAILURE() << "a key without a value that is no family's flag is refused";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "machine 'mesh:4x4,hop_ns': option 'hop_ns' must look like key=value");
  }
}

TEST(MachineSpec, BuildingTheValueMakesTheMachineOfItsText) {
  for (const auto& text : kSpecs) {
    if (text.find(".json") != std::string::npos) continue;  // no such files here
    const Machine a = build_machine(MachineSpec::parse(text)), b = parse_machine(text);
    EXPECT_EQ(a.name, b.name) << text;
    EXPECT_EQ(a.nodes(), b.nodes()) << text;
    EXPECT_EQ(a.costs.send_overhead, b.costs.send_overhead) << text;
    EXPECT_EQ(a.net.hop_time, b.net.hop_time) << text;
  }
  EXPECT_EQ(build_machine(MachineSpec::parse("mesh:2x2,hop_ns=1,hop_ns=2")).net.hop_time, 2000);
}

// sweep --vary: a variant is the spec with options added, named by its text; a later option
// overrides the spec's own.
TEST(MachineSpec, AddOptionsMakesAVariantThatOverridesTheSpecsOwn) {
  const MachineSpec base = MachineSpec::parse("delta:2x2,send_us=200");
  MachineSpec variant = base;
  variant.add_options("hop_ns=400,send_us=100");
  EXPECT_EQ(variant.text(), "delta:2x2,send_us=200,hop_ns=400,send_us=100");
  EXPECT_EQ(MachineSpec::parse(variant.text()), variant);
  const Machine m = build_machine(variant);
  EXPECT_EQ(m.name, "delta:2x2,send_us=200,hop_ns=400,send_us=100");
  EXPECT_EQ(m.costs.send_overhead, 100'000'000);  // 100 us in ps
  EXPECT_EQ(m.net.hop_time, 400'000);
  EXPECT_EQ(build_machine(base).costs.send_overhead, 200'000'000);  // the base is unchanged
  MachineSpec bad = MachineSpec::parse("mesh:2x2");
  try {
    bad.add_options("hop_ns");
    ADD_FAILURE() << "a malformed option is refused";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "machine 'mesh:2x2,hop_ns': option 'hop_ns' must look like key=value");
  }
  MachineSpec file = MachineSpec::parse("m.json");
  EXPECT_THROW(file.add_options("hop_ns=1"), UsageError);
  EXPECT_THROW(build_machine(MachineSpec{"", "m.json", {{"hop_ns", "1"}}}), UsageError);
}

TEST(MachineSpec, OpenVariantsAndEvidenceAreThoseOfTheFamily) {
  const MachineSpec delta = MachineSpec::parse("delta:16x16,hop_ns=50");
  EXPECT_EQ(open_variants(delta).size(), open_variants("delta:16x16,hop_ns=50").size());
  EXPECT_FALSE(open_variants(delta).empty());
  ASSERT_TRUE(ranking_evidence(delta));
  EXPECT_EQ(ranking_evidence(delta)->counted_by, ranking_evidence("delta")->counted_by);
  EXPECT_FALSE(ranking_evidence(MachineSpec::parse("mesh:4x4")));
  EXPECT_TRUE(open_variants(MachineSpec::parse("m.json")).empty());
  EXPECT_FALSE(ranking_evidence(MachineSpec::parse("m.json")));
}

}  // namespace
