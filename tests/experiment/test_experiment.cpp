// The experiment harness (experiment/): CSV as RFC 4180 says, read back with libcsv's own
// parser; tables whose columns fit long names; output that is not written fails the command.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "support/csv.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

using ts_test::parse_csv;

TEST(Experiment, CsvFieldQuotesOnlyWhatRfc4180Requires) {
  EXPECT_EQ(experiment::csv_field("alltoall/1-lev-xor"), "alltoall/1-lev-xor");
  EXPECT_EQ(experiment::csv_field("alltoall/2-lev-c,r"), "\"alltoall/2-lev-c,r\"");
  EXPECT_EQ(experiment::csv_field("a \"quoted\" name"), "\"a \"\"quoted\"\" name\"");
  EXPECT_EQ(experiment::csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(experiment::csv_line({"x,y", "", "z"}), "\"x,y\",,z\n");
}

// csv_fields reads back what csv_line writes (one line: no field with a line end).
TEST(Experiment, CsvFieldsReadsBackWhatCsvLineWrites) {
  const std::vector<std::string> fields{"delta:16x16,hop_ns=50", "alltoall/2-lev-c,r", "", "a \"quoted\" name", "7"};
  std::string line = experiment::csv_line(fields);
  line.pop_back();  // the "\n"
  EXPECT_EQ(experiment::csv_fields(line), fields);
  EXPECT_EQ(experiment::csv_fields("a,,b"), (std::vector<std::string>{"a", "", "b"}));
}

TEST(Experiment, EveryAlltoallRecordReadsBackAsTwelveFieldsWithItsName) {
  const Machine m = parse_machine("mesh:2x2");
  const auto algs = algorithms::select("alltoall/all");
  std::vector<experiment::Job> jobs;
  for (const auto* a : algs) jobs.push_back({&m, a, algorithms::Args{8}, {}});
  const auto outcomes = experiment::run_jobs(jobs, {.parallel = 2});
  std::vector<const experiment::Record*> records;
  for (const auto& o : outcomes) {
    ASSERT_TRUE(o.record) << o.job->algorithm->name << ": " << o.error;
    records.push_back(&*o.record);
  }
  const auto rows = parse_csv(experiment::records_csv(records));
  ASSERT_EQ(rows.size(), algs.size() + 1);
  for (const auto& row : rows) EXPECT_EQ(row.size(), 12u);
  for (std::size_t i = 0; i < algs.size(); ++i) {
    EXPECT_EQ(rows[i + 1][0], "mesh:2x2");
    EXPECT_EQ(rows[i + 1][1], algs[i]->name);  // "alltoall/2-lev-c,r" stays one field
    EXPECT_EQ(rows[i + 1][2], "8");
  }
}

TEST(Experiment, OutcomesKeepTheJobsOrderAndTheSerialFigures) {
  const Machine m = parse_machine("mesh:4x4");
  const auto& alg = algorithms::find("alltoall/1-lev-xor");
  std::vector<experiment::Job> jobs;
  for (std::size_t s : {16u, 1024u, 64u}) jobs.push_back({&m, &alg, algorithms::Args{s}, {}});
  const auto outcomes = experiment::run_jobs(jobs, {.parallel = 2});
  ASSERT_EQ(outcomes.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(outcomes[i].record);
    EXPECT_EQ(outcomes[i].job, &jobs[i]);
    const auto alone = experiment::emulate(m, alg, jobs[i].args);
    EXPECT_EQ(outcomes[i].record->result.trace_hash, alone.result.trace_hash);
    EXPECT_EQ(outcomes[i].record->result.makespan, alone.result.makespan);
  }
}

// The memory the running jobs may share: never below the largest job (each must be able to run),
// an eighth of the host's memory as a floor (equal small jobs, as in a phantom sweep, run side by
// side), and --memory-mb above both when it is larger.
TEST(Experiment, MemoryBudgetIsTheLargestJobTheHostsEighthOrTheOption) {
  constexpr std::size_t MiB = 1024 * 1024, GiB = 1024 * MiB;
  const std::vector<std::size_t> small{13 * MiB, 13 * MiB, 12 * MiB}, big{4 * GiB, 1 * GiB};
  EXPECT_EQ(experiment::memory_budget(small, 0, 24 * GiB), 3 * GiB);
  EXPECT_EQ(experiment::memory_budget(small, 0, 0), 13 * MiB);  // the host's memory unknown
  EXPECT_EQ(experiment::memory_budget(big, 0, 24 * GiB), 4 * GiB);
  EXPECT_EQ(experiment::memory_budget(big, 0, 64 * GiB), 8 * GiB);
  EXPECT_EQ(experiment::memory_budget(big, 6144, 24 * GiB), 6 * GiB);
  EXPECT_EQ(experiment::memory_budget(big, 1024, 24 * GiB), 4 * GiB);  // never below the largest job
}

TEST(Experiment, TableColumnsFitTheLongestEntry) {
  const std::string t = experiment::text_table("size", {"16", "1024"}, {"a", "scatter/logp-lev-rec(0.75)"},
                                               {{"1.000", "22.500*"}, {"", "3.250 "}});
  EXPECT_EQ(t,
            "size      a  scatter/logp-lev-rec(0.75)\n"
            "  16  1.000                     22.500*\n"
            "1024      -                      3.250 \n");
}

TEST(Experiment, WinnerLeadIsTheNextFastestsExtraTime) {
  // 150 us against the best 120 us: 30 / 120 = 25.0%; the order of the times does not matter.
  EXPECT_EQ(experiment::winner_lead({microseconds(200), microseconds(120), microseconds(150)}), "25.0%");
  // 1001 us against 1000 us: 0.1%; 1000.2 us: 0.02%, a real lead that rounds to nothing.
  EXPECT_EQ(experiment::winner_lead({microseconds(1001), microseconds(1000)}), "0.1%");
  EXPECT_EQ(experiment::winner_lead({nanoseconds(1'000'200), microseconds(1000)}), "<0.1%");
  EXPECT_EQ(experiment::winner_lead({microseconds(7), microseconds(9), microseconds(7)}), "tie");
  EXPECT_EQ(experiment::winner_lead({microseconds(7)}), "-");
  EXPECT_EQ(experiment::winner_lead({}), "-");
}

// The sweep table's last column is the lead of each size's winner, computed from the same runs'
// makespans (a 2x3 mesh, two algorithms, three sizes: each row's lead checked against its cells).
TEST(Experiment, SweepTableEndsEachRowWithTheWinnersLead) {
  const Machine m = parse_machine("mesh:2x3");
  const std::vector<const algorithms::Algorithm*> algs = {&algorithms::find("alltoall/1-lev-dir"),
                                                          &algorithms::find("alltoall/1-lev-xor")};
  const std::vector<std::size_t> sizes = {8, 64, 512};
  std::vector<experiment::Job> jobs;
  for (const auto* a : algs)
    for (std::size_t s : sizes) jobs.push_back({&m, a, algorithms::Args{s}, {}});
  const auto outcomes = experiment::run_jobs(jobs, {.parallel = 1});
  const std::string table = experiment::makespan_table(m, algs, sizes, outcomes);
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    std::vector<Time> times;
    for (const auto& o : outcomes)
      if (o.job->args.size == sizes[r]) times.push_back(o.record->result.makespan);
    ASSERT_EQ(times.size(), 2u);
    const std::string lead = experiment::winner_lead(times);
    EXPECT_NE(lead, "-");
    const auto at = table.find("\n" + fmt::format("{:>4}", sizes[r]) + " ");
    ASSERT_NE(at, std::string::npos) << table;
    const std::string row = table.substr(at + 1, table.find('\n', at + 1) - at - 1);
    EXPECT_EQ(row.substr(row.size() - lead.size()), lead) << row;
  }
  EXPECT_NE(table.find("lead = how much longer the next fastest takes"), std::string::npos) << table;
}

// sweep --vary's summary, from makespans set by hand: the base's winner per size, its lead, and on
// how many variants the same algorithm wins.
TEST(Experiment, WinnerStabilityTableSaysWhereEachSizesWinnerHolds) {
  const Machine m = parse_machine("mesh:2x2");
  const auto& a = algorithms::find("alltoall/1-lev-dir");
  const auto& b = algorithms::find("alltoall/1-lev-xor");
  const std::vector<std::size_t> sizes = {16, 32};
  std::vector<experiment::Job> jobs;
  for (const auto* alg : {&a, &b})
    for (std::size_t s : sizes) jobs.push_back({&m, alg, algorithms::Args{s}, {}});
  // Makespans in us for (a 16, a 32, b 16, b 32).
  auto outcomes = [&](std::vector<int> us) {
    std::vector<experiment::Outcome> out;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      experiment::Record r;
      r.result.makespan = microseconds(us[i]);
      out.push_back({&jobs[i], r, ""});
    }
    return out;
  };
  const auto base = outcomes({10, 20, 12, 20});  // 16: a by 20%; 32: a tie
  const std::vector<experiment::Variant> variants = {
      {"hop_ns=1", "why one", outcomes({15, 19, 12, 20})},  // 16: b; 32: a
      {"hop_ns=2", "", outcomes({10, 20, 11, 20})},          // 16: a; 32: the same tie
  };
  EXPECT_EQ(experiment::fastest_by_size(sizes, base),
            (std::vector<std::string>{"alltoall/1-lev-dir", "tie: alltoall/1-lev-dir, alltoall/1-lev-xor"}));
  EXPECT_EQ(experiment::winner_stability_table(sizes, base, variants),
            "Winners across 2 machine variants (--vary, 8 runs more): the winner holds on every variant at 0 of 2 sizes\n"
            "size  winner                                        lead  holds on  where another wins\n"
            "  16  alltoall/1-lev-dir                           20.0%    1 of 2  [1] alltoall/1-lev-xor\n"
            "  32  tie: alltoall/1-lev-dir, alltoall/1-lev-xor    tie    1 of 2  [1] alltoall/1-lev-dir\n"
            "[1] hop_ns=1: why one\n"
            "[2] hop_ns=2\n");
}

// With a preset's ranking evidence, a lead below its decisive lead is marked '?' and explained
// under the table; a larger lead and a tie are not marked, and without evidence nothing is.
TEST(Experiment, SweepTableMarksLeadsThePresetsEvidenceCannotDecide) {
  const Machine m = parse_machine("mesh:2x2");
  const auto& a = algorithms::find("alltoall/1-lev-dir");
  const auto& b = algorithms::find("alltoall/1-lev-xor");
  const std::vector<std::size_t> sizes = {16, 32, 64};
  std::vector<experiment::Job> jobs;
  for (const auto* alg : {&a, &b})
    for (std::size_t s : sizes) jobs.push_back({&m, alg, algorithms::Args{s}, {}});
  // a: 100, 100, 100 us; b: 105 (a by 5%), 120 (a by 20%), 100 (a tie).
  const std::vector<int> us = {100, 100, 100, 105, 120, 100};
  std::vector<experiment::Outcome> outcomes;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    experiment::Record r;
    r.result.makespan = microseconds(us[i]);
    outcomes.push_back({&jobs[i], r, ""});
  }
  const RankingEvidence evidence{.decisive_lead = 0.10, .close_pairs = 3, .close_reordered = 1, .far_pairs = 5, .far_reordered = 0,
                                 .measured_on = "Table 1", .counted_by = "paperNNN t1"};
  const std::vector<const algorithms::Algorithm*> algs = {&a, &b};
  const std::string marked = experiment::makespan_table(m, algs, sizes, outcomes, &evidence);
  EXPECT_NE(marked.find("  16              0.100*              0.105    5.0%?\n"), std::string::npos) << marked;
  EXPECT_NE(marked.find("  32              0.100*              0.120   20.0% \n"), std::string::npos) << marked;
  EXPECT_NE(marked.find("  64              0.100*              0.100*    tie \n"), std::string::npos) << marked;
  EXPECT_NE(marked.find("? = a lead under 10%: on Table 1, the preset puts 3 pairs of algorithms less than 10% apart, and the\n"
                        "machine ran 1 of them in the other order (0 of the 5 pairs further apart; `paperNNN t1`). `--vary\n"
                        "open` shows where such a winner holds.\n"),
            std::string::npos)
      << marked;
  const std::string plain = experiment::makespan_table(m, algs, sizes, outcomes);
  EXPECT_EQ(plain.find('?'), std::string::npos) << plain;
  // A decisive lead everywhere: no mark, no note.
  RankingEvidence loose = evidence;
  loose.decisive_lead = 0.01;
  EXPECT_EQ(experiment::makespan_table(m, algs, sizes, outcomes, &loose).find('?'), std::string::npos);
}

TEST(Experiment, WritingToAFullDeviceIsAnError) {
  EXPECT_THROW(experiment::write_output("/dev/full", std::string(1 << 16, 'x')), UsageError);
  EXPECT_THROW(experiment::write_output("/nonexistent/dir/out.txt", "x"), UsageError);
}

}  // namespace

// A saved sweep's CSV reads back to the picosecond (6 decimals of microseconds), with only the four
// columns another tool may write, quoted names included; a line that is not a record is refused.
TEST(Experiment, RecordsCsvReadsBackToThePicosecond) {
  experiment::Record r;
  r.machine = "mesh:2x2";
  r.algorithm = "alltoall/2-lev-c,r";
  r.size = 64;
  r.vps = 4;
  r.result.makespan = 123'456'789'012;  // 123456.789012 us
  r.result.trace_hash = 0xfc06ab1f8ea40fecULL;
  const auto back = experiment::parse_records_csv(experiment::records_csv({&r}), "saved.csv");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].algorithm, "alltoall/2-lev-c,r");
  EXPECT_EQ(back[0].size, 64u);
  EXPECT_EQ(back[0].vps, 4);
  EXPECT_EQ(back[0].result.makespan, 123'456'789'012);
  EXPECT_EQ(back[0].result.trace_hash, 0xfc06ab1f8ea40fecULL);
  const auto minimal = experiment::parse_records_csv("machine,algorithm,size,makespan_us\nm,a,16,2.5\n", "other.csv");
  ASSERT_EQ(minimal.size(), 1u);
  EXPECT_EQ(minimal[0].result.makespan, 2'500'000);
  // The largest makespan a run may have, to the picosecond (written through a double, it was 1 ps off).
  r.result.makespan = kMaxTimeLimit - 1;
  EXPECT_EQ(experiment::parse_records_csv(experiment::records_csv({&r}), "saved.csv").at(0).result.makespan,
            kMaxTimeLimit - 1);
  // Nothing is read as some other number: a makespan past 2^63 ps wrapped, a size or a hash of -1
  // became 2^64 - 1, a host time of nan was taken.
  const std::string full = "machine,algorithm,size,vps,makespan_us,messages,trace_hash,host_seconds,peak_rss_mb\n";
  for (const std::string bad :
       {std::string("machine,algorithm,size\n"), std::string("machine,algorithm,size,makespan_us\nm,a,16,-1\n"),
        std::string("machine,algorithm,size,makespan_us\nm,a,16,1.0000001\n"),
        std::string("machine,algorithm,size,makespan_us\nm,a,sixteen,1\n"),
        std::string("machine,algorithm,size,makespan_us\nm,a,16,99999999999999.000000\n"),
        std::string("machine,algorithm,size,makespan_us\nm,a,-1,1\n"), full + "m,a,16,4,1.0,7,-1,0.5,10\n",
        full + "m,a,16,4,1.0,-7,ff,0.5,10\n", full + "m,a,16,4,1.0,7,ff,nan,10\n", full + "m,a,16,4,1.0,7,ff,0.5,-10\n",
        full + "m,a,16,4x,1.0,7,ff,0.5,10\n"}) {
    try {
      experiment::parse_records_csv(bad, "bad.csv");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.csv"), std::string::npos) << e.what();
    }
  }
}

// Runs without a size (a program that chooses its own) turn the table round: one row per column,
// the fastest starred, the lead under the table; a failed run is "failed".
TEST(Experiment, WinnerTableOfRunsWithoutASizeHasARowPerColumn) {
  const std::vector<std::string> columns{"p[a=x]", "p[a=y]", "p[a=z]"};
  const std::vector<experiment::TableCell> cells{
      {"p[a=x]", 0, 2'000'000'000}, {"p[a=y]", 0, 1'000'000'000}, {"p[a=z]", 0, std::nullopt}};
  EXPECT_EQ(experiment::winner_table("m (4 processors)", columns, {0}, cells, false, nullptr),
            "m (4 processors): virtual makespan in ms, * = fastest of the runs\n"
            "   run  makespan\n"
            "p[a=x]    2.000 \n"
            "p[a=y]    1.000*\n"
            "p[a=z]   failed \n"
            "lead = how much longer the next fastest takes: 100.0%\n");
}
