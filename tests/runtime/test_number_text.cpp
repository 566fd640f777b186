// touchstone/number_text.hpp: the one reader of numbers written as text takes the whole text as a
// number of the type or refuses it, with what it is (not a number, or out of the type's range).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "touchstone/number_text.hpp"

using namespace touchstone;

namespace {

template <class T>
NumberText read(const std::string& text) {
  T v{};
  return read_number(text, v);
}

TEST(NumberText, IntegersAreReadWholeAndExact) {
  EXPECT_EQ(number_from_text<int>("0"), 0);
  EXPECT_EQ(number_from_text<int>("-17"), -17);
  EXPECT_EQ(number_from_text<std::uint64_t>("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(number_from_text<std::int64_t>("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(number_from_text<std::uint64_t>("3acafec3e3db8d4c", 16), std::uint64_t{0x3acafec3e3db8d4c});
}

// Each of these was once read as a number by one of the tools (std::stoll, strtol and
// std::istream skip white space and take '+'; std::stoull reads "-1" as 2^64 - 1).
TEST(NumberText, AnythingBesidesTheNumberIsRefused) {
  for (const std::string text : {"", " 5", "5 ", "\r5", "+5", "5x", "0x10", "1e3", "1.0", "-", "five"})
    EXPECT_EQ(read<long long>(text), NumberText::not_a_number) << "'" << text << "'";
  EXPECT_EQ(read<std::uint64_t>("-1"), NumberText::not_a_number);
  EXPECT_EQ(read<std::size_t>("-0"), NumberText::not_a_number);
  EXPECT_EQ(number_from_text<std::uint64_t>("0x3a", 16), std::nullopt);
}

TEST(NumberText, NumbersPastTheTypeAreOutOfRange) {
  EXPECT_EQ(read<std::uint64_t>("18446744073709551616"), NumberText::out_of_range);
  EXPECT_EQ(read<int>("2147483648"), NumberText::out_of_range);
  EXPECT_EQ(read<int>("-2147483649"), NumberText::out_of_range);
  EXPECT_EQ(read<double>("1e400"), NumberText::out_of_range);
  EXPECT_EQ(read<double>("inf"), NumberText::out_of_range);
  EXPECT_EQ(read<double>("-infinity"), NumberText::out_of_range);
}

TEST(NumberText, RealsAreDecimalAndFinite) {
  EXPECT_EQ(number_from_text<double>("0.75"), 0.75);
  EXPECT_EQ(number_from_text<double>("-2.5e-3"), -2.5e-3);
  EXPECT_EQ(number_from_text<double>("7"), 7.0);
  EXPECT_EQ(number_from_text<double>(".5"), 0.5);
  // strtod and std::stod took these: a NaN passes every "x < lo || x > hi" check.
  for (const std::string text : {"nan", "NaN", "-nan", "nan(1)", "0x1p3", " 1.5", "+1.5", "1.5s", "1,5"})
    EXPECT_EQ(read<double>(text), NumberText::not_a_number) << "'" << text << "'";
}

TEST(NumberText, ARangeIsInclusiveAtBothEnds) {
  EXPECT_EQ(number_in_range("1", 1, 4), 1);
  EXPECT_EQ(number_in_range("4", 1, 4), 4);
  EXPECT_EQ(number_in_range("0", 1, 4), std::nullopt);
  EXPECT_EQ(number_in_range("5", 1, 4), std::nullopt);
  EXPECT_EQ(number_in_range("99999999999", 1, 4), std::nullopt);
  EXPECT_EQ(number_in_range(" 2", 1, 4), std::nullopt);
}

}  // namespace
