// Machine presets: the Delta of paper 000 (section 2) and its sub-meshes.
#include <gtest/gtest.h>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

TEST(DeltaPreset, IsThePapersSixteenByThirtyTwoWormholeMesh) {
  const Machine m = parse_machine("delta");
  EXPECT_EQ(m.nodes(), 512);
  EXPECT_EQ(m.topology->dims(), (std::vector<int>{16, 32}));
  EXPECT_EQ(m.net.packet_payload, 482);  // "512 bytes, with 482 bytes reserved for data
  EXPECT_EQ(m.net.packet_header, 30);    //  and 30 bytes for the message header"
  EXPECT_EQ(m.net.inj_ports, 1);
  EXPECT_EQ(m.net.ej_ports, 1);
  // XY routing: from (0,0) to (1,2) along the row first.
  EXPECT_EQ(m.topology->distance(0, 32 + 2), 3);
}

TEST(DeltaPreset, FittedCostsKeepThePapersAsymmetries) {
  const Machine m = parse_machine("delta:16x16");
  EXPECT_EQ(m.nodes(), 256);
  EXPECT_EQ(m.name, "delta:16x16");
  // Section 4: "the set-up time of receiving a message is less than the set-up time of sending a
  // message, while a processor can send out data faster than it can be received".
  EXPECT_LT(m.costs.recv_overhead, m.costs.send_overhead);
  EXPECT_LT(m.costs.send_per_byte, m.costs.recv_per_byte);
  // Its message-passing library searched the receive queues in software (docs/model.md 2.5).
  EXPECT_GT(m.costs.match_per_entry, 0);
  // Its CPU combined and extracted blocks in local memory (docs/model.md 2.11).
  EXPECT_GT(m.costs.copy_per_byte, 0);
  EXPECT_GT(m.costs.copy_per_piece, 0);
  // Injection and ejection run at the link's rate (one fitted byte time for the network).
  EXPECT_EQ(m.net.inject_byte_time, m.net.link_byte_time);
  EXPECT_EQ(m.net.eject_byte_time, m.net.link_byte_time);
}

TEST(DeltaPreset, SubMeshMustFitInTheDelta) {
  EXPECT_NO_THROW(parse_machine("delta:4x8"));
  for (const char* bad : {"delta:17x4", "delta:4x33", "delta:4x4x4"}) {
    try {
      parse_machine(bad);
      FAIL() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("R <= 16 and C <= 32"), std::string::npos) << e.what();
    }
  }
}

TEST(DeltaPreset, OptionsOverrideTheFittedValues) {
  const Machine m = parse_machine("delta:16x16,send_us=150");
  EXPECT_EQ(m.costs.send_overhead, microseconds(150));
  EXPECT_EQ(m.costs.recv_overhead, parse_machine("delta:16x16").costs.recv_overhead);
}
