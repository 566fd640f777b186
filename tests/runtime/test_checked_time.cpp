// Checked virtual-time arithmetic (runtime/src/checked_time.hpp): no input silently wraps
// the 64-bit count of picoseconds; each case ends in a clear error (or the correct result).
#include <gtest/gtest.h>

#include <string>

#include "support/model.hpp"
#include "support/run_error.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string usage_error(const Machine& m, const Program& prog, const RunOptions& o = {}) {
  return ts_test::failure_of<UsageError>(m, prog, o);
}

const Program kNothing = [](Proc&) {};

// compute(huge) twice and a barrier used to wrap the clock and report a makespan of 43.06 us.
TEST(CheckedTime, ComputePastTheTimeLimitStopsTheRun) {
  const Time huge = kNever / 2 + 1;
  const std::string e = ts_test::run_error(ts_test::prime_machine("mesh:1x2"), [&](Proc& p) {
    p.compute(huge);
    p.compute(huge);
    p.barrier();
  });
  EXPECT_TRUE(contains(e, "virtual time limit of 3600000000 us exceeded")) << e;
  EXPECT_TRUE(contains(e, "compute(4611686018427387904 ps) at t=0 us")) << e;
}

// Up to the limit exactly is allowed: the clock lands on it and the run succeeds.
TEST(CheckedTime, ComputeUpToTheLimitIsAllowed) {
  RunOptions o;
  o.time_limit = microseconds(10);
  const RunResult r = run(ts_test::prime_machine("mesh:1x2"), [](Proc& p) { p.compute(microseconds(10)); }, o);
  EXPECT_EQ(r.makespan, microseconds(10));
  const std::string e = ts_test::run_error(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
    p.compute(microseconds(6));
    p.compute(microseconds(5));
  }, o);
  EXPECT_TRUE(contains(e, "compute(5000000 ps) at t=6 us")) << e;
}

// A VP whose last call takes it past the limit, with no later event, used to end the run normally
// with a makespan beyond the limit: a local copy of 2^40 bytes at 1 ms per byte.
TEST(CheckedTime, ACopyThatWouldOverflowIsStopped) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.copy_per_byte = kMaxPerUnitTime;
  const std::string e = ts_test::run_error(m, [](Proc& p) { p.local_copy(std::size_t{1} << 40, 1); });
  EXPECT_TRUE(contains(e, "time limit")) << e;
  EXPECT_TRUE(contains(e, "compute(9223372036854775807 ps)")) << e;  // saturated, not wrapped
}

// A message whose send cost alone passes the limit stops before any cost of it is computed.
TEST(CheckedTime, AMessageCostingMoreThanTheLimitIsStopped) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.send_per_byte = kMaxPerUnitTime;  // 1 ms per byte: 2^24 bytes cost 16777 s > 3600 s
  const std::string e = ts_test::run_error(m, [](Proc& p) {
    std::vector<std::byte> big(std::size_t{1} << 24);
    if (p.rank() == 0) p.send(1, 0, big);
    if (p.rank() == 1) p.recv(0, 0, big);
  });
  EXPECT_TRUE(contains(e, "a message of 16777216 bytes from rank 0 to rank 1 alone costs the sender's CPU")) << e;
}

TEST(CheckedTime, MachinesWhoseCostsCouldOverflowAreRefusedByRun) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.send_per_byte = kMaxPerUnitTime + 1;
  EXPECT_TRUE(contains(usage_error(m, kNothing), "send_per_byte = 1000000001 ps is outside 0..1000000000 ps"));
  m = ts_test::prime_machine("mesh:1x2");
  m.net.hop_time = -1;
  EXPECT_TRUE(contains(usage_error(m, kNothing), "hop_time = -1 ps"));
  m = ts_test::prime_machine("mesh:1x2");
  m.node_costs.assign(2, m.costs);
  m.node_costs[1].recv_overhead = kMaxOverheadTime + 1;
  EXPECT_TRUE(contains(usage_error(m, kNothing), "node 1's recv_overhead"));
  m = ts_test::prime_machine("mesh:1x2");
  m.net.packet_payload = 0;
  EXPECT_TRUE(contains(usage_error(m, kNothing), "payload must be in 1..2^30"));
}

TEST(CheckedTime, TheTimeLimitIsRangeChecked) {
  RunOptions o;
  o.time_limit = kMaxTimeLimit + 1;
  EXPECT_TRUE(contains(usage_error(ts_test::prime_machine("mesh:1x2"), kNothing, o), "time limit must be in 1.."));
  o.time_limit = -5;
  EXPECT_TRUE(contains(usage_error(ts_test::prime_machine("mesh:1x2"), kNothing, o), "got -5 ps"));
  o.time_limit = kMaxTimeLimit;
  EXPECT_EQ(run(ts_test::prime_machine("mesh:1x2"), kNothing, o).makespan, 0);
}

// HPAM's per-level costs are Q^(l-1) x Table 1's: Q=65536 over 5 levels wrapped to negative costs.
TEST(CheckedTime, HpamRatioThatWouldOverflowIsRefusedAtParseTime) {
  try {
    parse_machine("hpam:1x1/1x1/1x1/1x1/1x1,Q=65536");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& err) {
    EXPECT_TRUE(contains(err.what(), "hpam: Q=65536 makes level 3's costs")) << err.what();
  }
  // The largest allowed: 10 ns x Q^(l-1) = 1 ms exactly (Q = 10^5, two levels).
  const Machine m = parse_machine("hpam:1x1/1x1,Q=100000");
  EXPECT_EQ(m.node_costs[1].send_per_byte, kMaxPerUnitTime);
  EXPECT_EQ(m.node_costs[1].send_overhead, microseconds(2) * 100000);
  EXPECT_THROW(parse_machine("hpam:1x1/1x1,Q=100001"), UsageError);
}

// The cap on per-byte times is what makes send_ns_per_byte=4611686018427387.904 (2^62 ps) a
// parse error rather than a wrapped 0 (machines/src/options.cpp); the runtime refuses the same
// value in a Machine filled in by a program.
TEST(CheckedTime, AWrappingPerByteTimeIsRefusedBothWays) {
  EXPECT_THROW(parse_machine("mesh:1x2,send_ns_per_byte=4611686018427387.904"), UsageError);
  Machine m = parse_machine("mesh:1x2");
  m.costs.send_per_byte = Time{1} << 62;
  EXPECT_TRUE(contains(usage_error(m, kNothing), "send_per_byte = 4611686018427387904 ps"));
}

}  // namespace

// ---------------------------------------------------------------- requests

namespace {

// Waiting on another VP's request used to block as a misleading application deadlock.
TEST(RequestMisuse, AnotherVpsWaitIsAUsageErrorNamingBothRanks) {
  Request shared;  // rank 0 starts it, rank 1 waits on it
  bool started = false;
  std::string e;
  try {
    run(ts_test::prime_machine("mesh:1x2"), [&](Proc& p) {
      std::vector<std::byte> buf(8);
      if (p.rank() == 0) {
        shared = p.irecv(1, 0, buf);
        started = true;
        p.compute(1000);  // rank 1 gets its turn while the request is rank 0's
        p.send(1, 1, buf);
        p.wait(shared);
      } else {
        p.compute(500);
        ASSERT_TRUE(started);
        p.wait(shared);
      }
    });
    ADD_FAILURE() << "no error";
  } catch (const RunUsageError& err) {
    e = err.what();
  }
  EXPECT_TRUE(contains(e, "rank 1 called wait on a request of rank 0")) << e;
  EXPECT_FALSE(shared.active());  // detached when the engine ended: its destructor is harmless
}

// A Request kept beyond the program of its VP used to be a use-after-free at its destruction.
TEST(RequestMisuse, ARequestOutlivingTheRunIsAUsageErrorAndDetached) {
  Request kept;
  std::string e;
  // The buffers outlive the run: a send reads its buffer until it completes (docs/model.md 1.5,
  // "Payload bytes"), so freeing it earlier is the program's own use-after-free, not the one tested.
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(8));
  try {
    run(ts_test::prime_machine("mesh:1x2"), [&](Proc& p) {
      std::vector<std::byte>& buf = bufs[static_cast<std::size_t>(p.rank())];
      if (p.rank() == 0) kept = p.isend(1, 0, buf);
      if (p.rank() == 1) p.recv(0, 0, buf);
    });
    ADD_FAILURE() << "no error";
  } catch (const RunUsageError& err) {
    e = err.what();
  }
  EXPECT_TRUE(contains(e, "a Request outlives the program")) << e;
  EXPECT_TRUE(contains(e, "rank 0: send of message #0 to 1")) << e;
  EXPECT_FALSE(kept.active());
}  // ~Request here touches nothing (under ASan: no use-after-free)

// A UsageError raised inside VP code keeps its kind: RunUsageError (the CLI's exit 1).
TEST(RequestMisuse, UsageErrorsInVpCodeAreRunUsageErrors) {
  try {
    run(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
      if (p.rank() == 1) throw UsageError("bad input found in VP code");
    });
    ADD_FAILURE() << "no error";
  } catch (const RunUsageError& e) {
    EXPECT_TRUE(contains(e.what(), "rank 1 failed at t=0 us: bad input found in VP code")) << e.what();
  }
  // Any other exception stays a plain RunError (exit 2).
  try {
    run(ts_test::prime_machine("mesh:1x2"), [](Proc&) { throw std::runtime_error("data check failed"); });
  } catch (const RunUsageError&) {
    ADD_FAILURE() << "a runtime_error became a usage error";
  } catch (const RunError&) {
  }
}

// Times printed as microseconds with six decimals (reports, traces, order logs, sweeps' CSV) are
// exact to the picosecond at every size, and read back as they were written; text that is not such
// a time, or a time past kNever, is not read as some other time.
TEST(CheckedTime, MicrosecondTextIsExactBothWays) {
  EXPECT_EQ(exact_us(12'280'000), "12.280000");
  EXPECT_EQ(exact_us(0), "0.000000");
  EXPECT_EQ(exact_us(-500), "-0.000500");
  EXPECT_EQ(exact_us(kMaxTimeLimit - 1), "999999999999.999999");  // a double would print 1000000000000.000000
  EXPECT_EQ(exact_us(kNever), "9223372036854.775807");
  for (const Time t : {Time{0}, Time{1}, Time{12'280'000}, kMaxTimeLimit - 1, kNever})
    EXPECT_EQ(time_from_us_text(exact_us(t)), t) << t;
  EXPECT_EQ(time_from_us_text("7"), 7'000'000);
  EXPECT_EQ(time_from_us_text("2.5"), 2'500'000);
  for (const char* bad : {"", ".5", "-1.000000", "+1.0", " 1.0", "1.0 ", "1.0000001", "1e3", "abc.123456", "1.2.3",
                          "9223372036854.775808", "99999999999999.000000", "99999999999999999999999"})
    EXPECT_EQ(time_from_us_text(bad), std::nullopt) << bad;
}

}  // namespace
