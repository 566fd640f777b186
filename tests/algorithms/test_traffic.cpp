// Communication matrices (paper 003, section 2): the figures of the paper's Figures 1 and 2
// computed exactly, section 7's generator, and CSV loading.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "algorithms/traffic.hpp"
#include "support/scratch.hpp"
#include "touchstone/error.hpp"

using namespace touchstone;
using algorithms::TrafficMatrix;

namespace {

// Paper 003, Figure 1 (all-to-many with equal traffic); blank cells are 0.
TrafficMatrix figure1() {
  return TrafficMatrix(8, {0, 3, 1, 0, 2, 1, 2, 1,  //
                           1, 0, 2, 2, 1, 1, 3, 0,  //
                           4, 1, 0, 2, 0, 2, 0, 1,  //
                           0, 2, 0, 0, 0, 3, 1, 4,  //
                           3, 0, 4, 0, 0, 2, 1, 0,  //
                           1, 2, 1, 2, 0, 0, 0, 4,  //
                           0, 2, 1, 0, 7, 0, 0, 0,  //
                           1, 0, 1, 4, 0, 1, 3, 0});
}

// Paper 003, Figure 2 (many-to-many with bounded traffic).
TrafficMatrix figure2() {
  return TrafficMatrix(8, {0, 3, 1, 0, 0, 1, 0, 1,  //
                           1, 0, 2, 2, 0, 1, 3, 0,  //
                           4, 1, 0, 2, 0, 2, 0, 1,  //
                           0, 2, 0, 0, 0, 3, 1, 4,  //
                           3, 0, 4, 0, 0, 2, 1, 0,  //
                           1, 2, 1, 2, 0, 0, 0, 4,  //
                           0, 0, 0, 0, 0, 0, 0, 0,  //
                           1, 0, 1, 4, 0, 1, 0, 0});
}

// A figure's margins: traffic r_i, c_j and fans f_i, g_j of every row and column, and their maxima.
struct Margins {
  std::int64_t r_i[8], c_j[8];
  int f_i[8], g_j[8];
  std::int64_t r, c, t;
  int f, g, h;
};

void expect_margins(const TrafficMatrix& m, const Margins& want) {
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(m.r_i(i), want.r_i[i]) << "row " << i;
    EXPECT_EQ(m.c_j(i), want.c_j[i]) << "column " << i;
    EXPECT_EQ(m.f_i(i), want.f_i[i]) << "row " << i;
    EXPECT_EQ(m.g_j(i), want.g_j[i]) << "column " << i;
  }
  EXPECT_EQ(m.r(), want.r);
  EXPECT_EQ(m.c(), want.c);
  EXPECT_EQ(m.t(), want.t);
  EXPECT_EQ(m.f(), want.f);
  EXPECT_EQ(m.g(), want.g);
  EXPECT_EQ(m.h(), want.h);
}

TEST(TrafficMatrix, Figure1Margins) {
  // Equal traffic 10 everywhere; the fans counted from the figure's non-blank cells.
  expect_margins(figure1(), {.r_i = {10, 10, 10, 10, 10, 10, 10, 10},
                             .c_j = {10, 10, 10, 10, 10, 10, 10, 10},
                             .f_i = {6, 6, 5, 4, 4, 5, 3, 5},
                             .g_j = {5, 5, 6, 4, 3, 6, 5, 4},
                             .r = 10, .c = 10, .t = 10, .f = 6, .g = 6, .h = 6});
}

TEST(TrafficMatrix, Figure2Margins) {
  // The figure's right margin and bottom row.
  expect_margins(figure2(), {.r_i = {6, 9, 10, 10, 10, 10, 0, 7},
                             .c_j = {10, 8, 9, 10, 0, 10, 5, 10},
                             .f_i = {4, 5, 5, 4, 4, 5, 0, 4},
                             .g_j = {5, 4, 5, 4, 0, 6, 3, 4},
                             .r = 10, .c = 10, .t = 10, .f = 5, .g = 6, .h = 6});
  EXPECT_EQ(figure2().total(), 62);
}

TEST(TrafficMatrix, Section7GeneratorIsEqualTraffic) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const auto& spec : {algorithms::TrafficSpec{32, 1.0 / 32, 100000, {}},
                             algorithms::TrafficSpec{2, 0.5, 100001, {}}, algorithms::TrafficSpec{7, 0.3, 999, {}}}) {
      const auto m = algorithms::generate_traffic(32, spec, seed);
      for (int i = 0; i < 32; ++i) {
        ASSERT_EQ(m.r_i(i), spec.t);
        ASSERT_EQ(m.c_j(i), spec.t);
        ASSERT_EQ(m.f_i(i), spec.k);
        ASSERT_EQ(m.g_j(i), spec.k);
      }
      EXPECT_EQ(m, algorithms::generate_traffic(32, spec, seed)) << "deterministic in the seed";
    }
  }
  // k = 32, l = 1/32: one destination of each row gets 31/32 of t, the 31 others share t/32.
  const auto m = algorithms::generate_traffic(32, {32, 1.0 / 32, 32 * 1024, {}}, 5);
  std::vector<std::int64_t> row(m.row(0).begin(), m.row(0).end());
  std::sort(row.begin(), row.end());
  EXPECT_EQ(row.back(), 31 * 1024);
  EXPECT_EQ(row.front(), 1024 / 31);
  EXPECT_NE(algorithms::generate_traffic(32, {2, 0.5, 1000, {}}, 1), algorithms::generate_traffic(32, {2, 0.5, 1000, {}}, 2));
}

TEST(TrafficMatrix, ParseSpecAndCsv) {
  const auto s = algorithms::parse_traffic("k=32,l=1/32,t=4096");
  EXPECT_EQ(s.k, 32);
  EXPECT_DOUBLE_EQ(s.l, 1.0 / 32);
  EXPECT_EQ(s.t, 4096);
  EXPECT_EQ(algorithms::parse_traffic("file=m.csv").file, "m.csv");
  // Without t= the run's size gives it (touchstone run --size, sweep --sizes); the generator alone
  // refuses such a spec.
  EXPECT_EQ(algorithms::parse_traffic("k=2").t, algorithms::TrafficSpec::kFromSize);
  EXPECT_FALSE(algorithms::parse_traffic("k=2").fixed());
  EXPECT_TRUE(algorithms::parse_traffic("k=2,t=0").fixed());
  EXPECT_TRUE(algorithms::parse_traffic("file=m.csv").fixed());
  EXPECT_THROW(algorithms::generate_traffic(4, algorithms::parse_traffic("k=2"), 1), UsageError);
  EXPECT_THROW(algorithms::parse_traffic("l=1/2,t=64"), UsageError);
  EXPECT_THROW(algorithms::parse_traffic("k=2,t=x"), UsageError);
  EXPECT_THROW(algorithms::parse_traffic("k=2,t=5,q=1"), UsageError);
  EXPECT_THROW(algorithms::parse_traffic("k=2,t=5,l=2"), UsageError);
  EXPECT_THROW(algorithms::parse_traffic("k=0,t=5"), UsageError);
  const auto m = algorithms::parse_traffic_csv("# fig\n0,3\n 1 , 0\n", "m.csv");
  EXPECT_EQ(m, TrafficMatrix(2, {0, 3, 1, 0}));
  EXPECT_THROW(algorithms::parse_traffic_csv("0,3\n1\n", "m.csv"), UsageError);
  EXPECT_THROW(algorithms::parse_traffic_csv("0,3,1\n1,0,2\n", "m.csv"), UsageError);
  EXPECT_THROW(algorithms::parse_traffic_csv("0,-3\n1,0\n", "m.csv"), UsageError);
  EXPECT_THROW(algorithms::load_traffic_csv("/nonexistent/m.csv"), UsageError);
}

std::string traffic_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UsageError";
  return {};
}

// Numbers of traffic specs and files never wrap; files are small regular files.
TEST(TrafficMatrix, NumbersAreRangeCheckedNeverWrapped) {
  // 4294967297 = 2^32 + 1 was taken as k = 1.
  EXPECT_NE(traffic_error([] { algorithms::parse_traffic("k=4294967297,t=64"); }).find("--traffic k: 4294967297 is outside 1..1048576"),
            std::string::npos);
  EXPECT_NE(traffic_error([] { algorithms::parse_traffic("k=2,t=1099511627777"); }).find("--traffic t"), std::string::npos);
  EXPECT_NE(
      traffic_error([] { algorithms::parse_traffic("k=2,t=64,l=nan"); }).find("l='nan' is not a number or fraction"),
      std::string::npos);
  EXPECT_NE(traffic_error([] { algorithms::parse_traffic("k=2,t=64,l=1.5"); }).find("l must be in [0,1]"),
            std::string::npos);
  // strtoll and stod skipped white space and took a '+' or a hexadecimal real.
  EXPECT_NE(traffic_error([] { algorithms::parse_traffic("k= 2,t=64"); }).find("--traffic k: ' 2' is not an integer"),
            std::string::npos);
  EXPECT_NE(traffic_error([] { algorithms::parse_traffic("k=+2,t=64"); }).find("'+2' is not an integer"),
            std::string::npos);
  EXPECT_NE(traffic_error([] { algorithms::parse_traffic("k=2,t=64,l=0x0.8p0"); }).find("is not a number or fraction"),
            std::string::npos);
  EXPECT_EQ(algorithms::parse_traffic("k=2,t=1099511627776").t, std::int64_t{1} << 40);
  // Entries near 2^63 overflowed the row and column sums (UBSan) and ended in std::bad_alloc.
  const std::string e = traffic_error([] { algorithms::parse_traffic_csv("0,9223372036854775000\n9223372036854775000,0\n", "big.csv"); });
  EXPECT_NE(e.find("big.csv line 1: 9223372036854775000 is outside 0..1099511627776"), std::string::npos) << e;
  EXPECT_NE(traffic_error([] { algorithms::parse_traffic_csv("0,-3\n1,0\n", "m.csv"); }).find("m.csv line 1: negative entry -3"),
            std::string::npos);
}

// Traffic files are capped at 64 MiB (a sparse file: nothing is written) and refused unread.
TEST(TrafficMatrix, FilesLargerThanTheCapAreRefusedUnread) {
  const auto path = ts_test::scratch_path("ts_big_traffic.csv").string();
  std::ofstream(path) << "0";
  std::filesystem::resize_file(path, (std::size_t{64} << 20) + 1);
  const std::string e = traffic_error([&] { algorithms::load_traffic_csv(path); });
  EXPECT_NE(e.find("ts_big_traffic.csv' is larger than 67108864 bytes"), std::string::npos) << e;
  std::filesystem::remove(path);
}

TEST(TrafficMatrix, OnlyRegularFilesAreRead) {
  const std::string e = traffic_error([] { algorithms::load_traffic_csv("/dev/zero"); });
  EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
  EXPECT_NE(e.find("/dev/zero"), std::string::npos) << e;
}

}  // namespace
