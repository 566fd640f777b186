// The claims ledger (touchstone/experiment/claims.hpp): verdicts from the tolerance, and the three printouts.
#include <cmath>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "touchstone/experiment/claims.hpp"

namespace {

using touchstone::claims::Format;
using touchstone::claims::Ledger;
using touchstone::claims::Verdict;
namespace claims = touchstone::claims;

std::string printed(const Ledger& l, Format f) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  l.print(out, f);
  std::fclose(out);
  std::string s(buf, len);
  std::free(buf);
  return s;
}

TEST(Claims, NumberVerdictFollowsTheToleranceOnBothSides) {
  Ledger l;
  EXPECT_EQ(l.number("a", "Fig. 1", 100, 110, 1.10).verdict, Verdict::reproduced);  // exactly 1.10x
  EXPECT_EQ(l.number("b", "Fig. 1", 100, 111, 1.10).verdict, Verdict::off);
  EXPECT_EQ(l.number("c", "Fig. 1", 110, 100, 1.10).verdict, Verdict::reproduced);  // 1/1.10
  const auto& d = l.number("d", "Fig. 1", 100, 50, 1.10);
  EXPECT_EQ(d.verdict, Verdict::off);
  EXPECT_DOUBLE_EQ(d.factor, 0.5);
  EXPECT_EQ(touchstone::claims::verdict_text(d), "off by 0.50x");
  EXPECT_EQ(l.number("e", "Fig. 1", 100, NAN, 2).verdict, Verdict::off);  // a missing value never passes
  EXPECT_THROW(l.number("f", "Fig. 1", 1, 1, 0.9), std::invalid_argument);
  EXPECT_EQ(l.count(Verdict::reproduced), 2);
  EXPECT_EQ(l.count(Verdict::off), 3);
}

TEST(Claims, StatementVerdictAndSummary) {
  Ledger l;
  l.statement("w", "Sec. 5.3", "A fastest", "A fastest", true);
  l.statement("x", "Sec. 5.3", "A before B", "B before A", false, "B's copies are cheap here");
  l.number("y", "Table 2", 2, 3, 1.1, "us");
  EXPECT_EQ(l.summary(), "3 claims: 1 reproduced, 1 off, 1 ordering differs");
  const std::string csv = printed(l, Format::csv);
  EXPECT_NE(csv.find("id,source,paper,ours,verdict,factor,note\n"), std::string::npos);
  EXPECT_NE(csv.find("x,Sec. 5.3,A before B,B before A,ordering differs,,B's copies are cheap here\n"), std::string::npos);
  EXPECT_NE(csv.find("y,Table 2,2 us,3 us,off by 1.50x,1.5000,\n"), std::string::npos);
  const std::string md = printed(l, Format::markdown);
  EXPECT_NE(md.find("| x | Sec. 5.3 | A before B | B before A | **ordering differs** | B's copies are cheap here |"),
            std::string::npos);
  EXPECT_NE(printed(l, Format::text).find("3 claims: 1 reproduced"), std::string::npos);
}

// A claim that flips between the preset and a variant the paper leaves open is undecided, whichever
// side reproduces it; one that holds (or fails) on both keeps its verdict.
TEST(Claims, SettleMarksTheClaimsAnOpenVariantFlipsUndecided) {
  Ledger preset, variant, other;
  preset.statement("both", "Sec. 7", "A < B", "A 1, B 2", true);
  preset.statement("flips", "Sec. 7", "A < C", "A 1, C 3", true);
  preset.number("gains", "Sec. 7", 1, 2, 1.1);
  preset.statement("never", "Sec. 7", "C < A", "A 1, C 3", false);
  preset.statement("mine", "Sec. 3", "x", "x", true);
  variant.statement("both", "Sec. 7", "A < B", "A 1, B 3", true);
  variant.statement("flips", "Sec. 7", "A < C", "A 4, C 3", false);
  variant.number("gains", "Sec. 7", 1, 1.05, 1.1);
  variant.statement("never", "Sec. 7", "C < A", "A 2, C 3", false);
  preset.settle(variant, "send_us=1.6");
  const auto& c = preset.claims();
  EXPECT_EQ(c[0].verdict, Verdict::reproduced);
  EXPECT_EQ(c[1].verdict, Verdict::undecided);
  EXPECT_EQ(claims::verdict_text(c[1]), "undecided (preset: reproduced)");
  EXPECT_EQ(c[1].note, "fails with send_us=1.6 (A 4, C 3)");
  EXPECT_EQ(c[2].verdict, Verdict::undecided);
  EXPECT_EQ(claims::verdict_text(c[2]), "undecided (preset: off by 2.00x)");
  EXPECT_EQ(c[2].note, "holds with send_us=1.6 (1.05)");
  EXPECT_EQ(c[3].verdict, Verdict::ordering_differs);
  EXPECT_EQ(c[4].verdict, Verdict::reproduced);  // not in the variant's ledger
  // A second variant that flips an undecided claim too adds its name, and the preset's verdict stays.
  other.statement("flips", "Sec. 7", "A < C", "A 5, C 3", false);
  preset.settle(other, "ports=1");
  EXPECT_EQ(claims::verdict_text(c[1]), "undecided (preset: reproduced)");
  EXPECT_EQ(c[1].note, "fails with send_us=1.6 (A 4, C 3); fails with ports=1 (A 5, C 3)");
  EXPECT_EQ(preset.count(Verdict::undecided), 2);
  EXPECT_EQ(preset.summary(), "5 claims: 2 reproduced, 0 off, 1 ordering differs, 2 undecided");
  EXPECT_NE(printed(preset, Format::markdown)
                .find("| flips | Sec. 7 | A < C | A 1, C 3 | **undecided (preset: reproduced)** |"),
            std::string::npos);
}

// A stated value the paper's own data contradict does not decide: a claim it flips keeps the
// preset's verdict, and its note says what the stated value gives, after what an open variant added.
TEST(Claims, AnnotateNamesWhatAContradictedStatementWouldFlipWithoutDecidingIt) {
  Ledger preset, open, stated;
  preset.statement("order", "Table 2", "A < B", "A 1, B 2", true);
  preset.number("startup", "Sec. 3.3", 5, 1, 1.1, "us");
  preset.statement("same", "Sec. 3.2", "A < C", "A 1, C 3", true);
  open.statement("order", "Table 2", "A < B", "A 3, B 2", false);
  stated.statement("order", "Table 2", "A < B", "A 4, B 2", false);
  stated.number("startup", "Sec. 3.3", 5, 5, 1.1, "us");
  stated.statement("same", "Sec. 3.2", "A < C", "A 2, C 3", true);
  preset.settle(open, "send_us=0.75");
  preset.annotate(stated, "send_us=5");
  const auto& c = preset.claims();
  EXPECT_EQ(claims::verdict_text(c[0]), "undecided (preset: reproduced)");
  EXPECT_EQ(c[0].note, "fails with send_us=0.75 (A 3, B 2); fails at the stated send_us=5 (A 4, B 2)");
  EXPECT_EQ(claims::verdict_text(c[1]), "off by 0.20x");
  EXPECT_EQ(c[1].note, "holds at the stated send_us=5 (5 us)");
  EXPECT_EQ(c[2].verdict, Verdict::reproduced);
  EXPECT_EQ(c[2].note, "");
  EXPECT_EQ(preset.summary(), "3 claims: 1 reproduced, 1 off, 0 ordering differs, 1 undecided");
}

// Three algorithms at one size, two at another, times set by hand (ours, measured):
//   size A: a 100 / 10, b 105 / 9, c 150 / 20 -> pairs a-b lead 5% (the machine ran b first:
//           reordered), a-c 50% (kept), b-c 42.9% (kept);
//   size B: a 200 / 5, b 200 / 7 -> lead 0, a tie in ours: never reordered.
TEST(Claims, PairOrdersCountEachPairOnceOnItsSideOfTheLead) {
  const std::vector<std::vector<std::pair<double, double>>> groups = {{{100, 10}, {105, 9}, {150, 20}}, {{200, 5}, {200, 7}}};
  const auto at10 = claims::ordering_by_lead(groups, 0.10);
  EXPECT_EQ(at10.below.pairs, 2);  // a-b (5%) and the tie
  EXPECT_EQ(at10.below.reordered, 1);
  EXPECT_EQ(at10.at_least.pairs, 2);
  EXPECT_EQ(at10.at_least.reordered, 0);
  // At exactly the lead a pair counts as "at least": 105 = 100 * 1.05.
  const auto at5 = claims::ordering_by_lead(groups, 0.05);
  EXPECT_EQ(at5.below.pairs, 1);
  EXPECT_EQ(at5.below.reordered, 0);
  EXPECT_EQ(at5.at_least.pairs, 3);
  EXPECT_EQ(at5.at_least.reordered, 1);
  // A measured tie is not a reordering either.
  const auto tied = claims::ordering_by_lead({{{1, 3}, {2, 3}}}, 0.10);
  EXPECT_EQ(tied.at_least.pairs, 1);
  EXPECT_EQ(tied.at_least.reordered, 0);
  EXPECT_EQ(claims::ordering_by_lead({}, 0.10).below.pairs, 0);
}

TEST(Claims, CsvQuotesFieldsWithCommasAndQuotes) {
  Ledger l;
  l.statement("2-lev-c,r", "\"best\" for L <= 256", "p", "o", true);
  EXPECT_NE(printed(l, Format::csv).find("\"2-lev-c,r\",\"\"\"best\"\" for L <= 256\",p,o,reproduced,,\n"), std::string::npos);
}

TEST(Claims, FormatNamesParseAndBadOnesAreErrors) {
  EXPECT_EQ(touchstone::claims::parse_format("markdown"), Format::markdown);
  EXPECT_THROW(touchstone::claims::parse_format("html"), std::invalid_argument);
}

// A family of claims as one row over its points: ids take the point's key, numbers keep the row's
// tolerance and unit, notes join the row's and the point's, and a point may state its own ordering.
TEST(Claims, RowsOverPointsBecomeClaimsPointByPoint) {
  using Row = claims::Row<int>;
  const std::vector<Row> rows = {
      Row::number("n", "Fig. 1", [](const int& p) { return claims::Number(10, 10.0 * p, p == 2 ? "at two" : ""); },
                  1.5, "ms", "row note"),
      Row::statement("s", "Sec. 2", "p odd", [](const int& p) {
        return claims::Statement(std::to_string(p), p % 2 == 1, "", p == 3 ? "p is three" : "");
      }),
  };
  Ledger l;
  const auto key = [](const int& p) { return p == 3 ? std::string() : std::to_string(p); };
  claims::add_rows(l, rows, std::vector<int>{1, 2, 3}, key, "fig.");
  ASSERT_EQ(l.claims().size(), 6u);
  const auto& c = l.claims();
  EXPECT_EQ(c[0].id, "fig.n.1");
  EXPECT_EQ(c[1].id, "fig.s.1");  // point by point: both rows at 1 before any at 2
  EXPECT_EQ(c[2].id, "fig.n.2");
  EXPECT_EQ(c[4].id, "fig.n");    // an empty key: the row's id alone
  EXPECT_EQ(c[0].verdict, Verdict::reproduced);
  EXPECT_EQ(c[0].ours, "10 ms");
  EXPECT_EQ(c[0].note, "row note");
  EXPECT_EQ(c[2].verdict, Verdict::off);  // 20 / 10 beyond 1.5x
  EXPECT_EQ(c[2].note, "row note; at two");
  EXPECT_EQ(c[3].verdict, Verdict::ordering_differs);
  EXPECT_EQ(c[3].paper, "p odd");
  EXPECT_EQ(c[5].paper, "p is three");
  EXPECT_EQ(c[5].verdict, Verdict::reproduced);
}

}  // namespace
