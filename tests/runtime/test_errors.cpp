// Errors (docs/model.md 1.5, 2.5; docs/machines.md; docs/cli.md): every misuse ends the run with a clear error naming what went
// wrong, the other VPs are unwound, and the run never hangs.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <thread>

#include "support/run_error.hpp"
#include "support/model.hpp"
#include "support/wrapped_topology.hpp"

using namespace touchstone;

namespace {

// The message of the touchstone::Error a run ends with ("" and a test failure if it succeeds).
std::string run_failure(const Machine& m, const Program& prog, Execution e = Execution::fibers) {
  RunOptions o;
  o.execution = e;
  return ts_test::failure_of<Error>(m, prog, o);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const Execution kBoth[] = {Execution::fibers, Execution::threads};

TEST(Errors, ExceptionInVpCodeNamesTheRankAndTheMessageAndUnwindsTheOthers) {
  for (Execution e : kBoth) {
    const std::string msg = run_failure(
        ts_test::prime_machine("mesh:2x2"),
        [](Proc& p) {
          std::vector<std::byte> b(4);
          if (p.rank() == 2) {
            p.compute(5);
            throw std::runtime_error("checksum mismatch in block 7");
          }
          p.recv(2, 0, b);  // everyone else waits for rank 2 forever
        },
        e);
    EXPECT_TRUE(contains(msg, "rank 2")) << msg;
    EXPECT_TRUE(contains(msg, "checksum mismatch in block 7")) << msg;
  }
  // A RunError, specifically.
  EXPECT_THROW(run(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
                 if (p.rank() == 1) throw std::logic_error("x");
               }),
               RunError);
}

TEST(Errors, NonStandardExceptionIsReportedToo) {
  const std::string msg = run_failure(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
    if (p.rank() == 1) throw 42;
  });
  EXPECT_TRUE(contains(msg, "rank 1")) << msg;
}

TEST(Errors, RankOutOfRange) {
  const Machine m = ts_test::prime_machine("mesh:2x2");
  std::vector<std::byte> b(4);
  std::string msg = run_failure(m, [&](Proc& p) {
    if (p.rank() == 1) p.send(4, 0, b);
  });
  EXPECT_TRUE(contains(msg, "rank 1")) << msg;
  EXPECT_TRUE(contains(msg, "out of range")) << msg;
  msg = run_failure(m, [&](Proc& p) {
    if (p.rank() == 3) p.recv(-5, 0, b);
  });
  EXPECT_TRUE(contains(msg, "rank 3") && contains(msg, "out of range")) << msg;
  msg = run_failure(m, [&](Proc& p) {
    Group g = p.group({0, 1});
    if (p.rank() == 0) p.send(2, 0, b, g);  // group rank 2 does not exist
  });
  EXPECT_TRUE(contains(msg, "out of range")) << msg;
  msg = run_failure(m, [&](Proc& p) { (void)p.hops(0, 9); });
  EXPECT_TRUE(contains(msg, "out of range")) << msg;
}

TEST(Errors, NegativeTag) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  std::vector<std::byte> b(4);
  std::string msg = run_failure(m, [&](Proc& p) {
    if (p.rank() == 0) p.send(1, -1, b);
  });
  EXPECT_TRUE(contains(msg, "tag")) << msg;
  msg = run_failure(m, [&](Proc& p) {
    if (p.rank() == 0) p.recv(1, -7, b);
  });
  EXPECT_TRUE(contains(msg, "tag")) << msg;
}

TEST(Errors, NegativeComputeDuration) {
  const std::string msg = run_failure(ts_test::prime_machine("mesh:1x2"), [](Proc& p) { p.compute(-1); });
  EXPECT_TRUE(contains(msg, "negative")) << msg;
}

TEST(Errors, MessageLargerThanTheReceiveBuffer) {
  const std::string msg = run_failure(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
    std::vector<std::byte> big(8), small(4);
    if (p.rank() == 0) p.send(1, 3, big);
    else p.recv(0, 3, small);
  });
  EXPECT_TRUE(contains(msg, "rank 1")) << msg;
  EXPECT_TRUE(contains(msg, "8 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "receive buffer of 4 bytes")) << msg;
}

TEST(Errors, WaitOnACompletedRequest) {
  for (Execution e : kBoth) {
    const std::string msg = run_failure(
        ts_test::prime_machine("mesh:1x2"),
        [](Proc& p) {
          std::vector<std::byte> b(4);
          if (p.rank() == 0) {
            Request r = p.isend(1, 0, b);
            p.wait(r);
            EXPECT_FALSE(r.active());
            p.wait(r);  // the second time
          } else {
            p.recv(0, 0, b);
          }
        },
        e);
    EXPECT_TRUE(contains(msg, "rank 0")) << msg;
    EXPECT_TRUE(contains(msg, "not active")) << msg;
  }
  const std::string msg = run_failure(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
    std::vector<std::byte> b(4);
    if (p.rank() == 0) p.send(1, 0, b);
    if (p.rank() == 1) {
      Request r = p.irecv(0, 0, b);
      EXPECT_TRUE(p.test(r) || (p.wait(r), true));
      Status s;
      p.test(r, &s);  // test after completion
    }
  });
  EXPECT_TRUE(contains(msg, "not active")) << msg;
}

// Calls the Proc from a std::thread that the VP's program spawns; the error thrown there is
// carried back to the VP and ends the run.
Program use_proc_from_other_thread(bool send) {
  return [send](Proc& p) {
    if (p.rank() != 1) return;
    std::exception_ptr err;
    std::thread t([&] {
      try {
        if (send) {
          std::vector<std::byte> b(4);
          p.send(0, 0, b);
        } else {
          p.compute(10);
        }
      } catch (...) {
        err = std::current_exception();
      }
    });
    t.join();
    if (err) std::rethrow_exception(err);
  };
}

// The run fails naming rank 1 and the thread, whether the foreign call is a send or a computation.
void expect_proc_refused_on_another_thread(Execution execution) {
  for (bool send : {false, true}) {
    const std::string msg =
        run_failure(ts_test::prime_machine("mesh:1x2"), use_proc_from_other_thread(send), execution);
    EXPECT_TRUE(contains(msg, "rank 1")) << msg;
    EXPECT_TRUE(contains(msg, "thread")) << msg;
  }
}

TEST(Errors, ProcUsedFromAnotherThreadWithThreadsExecution) {
  expect_proc_refused_on_another_thread(Execution::threads);
}

// The same in fibers mode (the default), where every VP runs on the scheduler's thread: the
// foreign thread is recognised by its id, not by who holds the baton.
TEST(Errors, ProcUsedFromAnotherThreadWithFibersExecution) {
  expect_proc_refused_on_another_thread(Execution::fibers);
}

TEST(Errors, UnreceivedMessageAtTheEndOfTheRun) {
  const std::string msg = run_failure(ts_test::prime_machine("mesh:1x3"), [](Proc& p) {
    std::vector<std::byte> b(12);
    if (p.rank() == 0) p.send(2, 77, b);
  });
  EXPECT_TRUE(contains(msg, "never received")) << msg;
  EXPECT_TRUE(contains(msg, "from 0 to 2, tag 77, 12 bytes")) << msg;
  EXPECT_THROW(run(ts_test::prime_machine("mesh:1x3"),
                   [](Proc& p) {
                     std::vector<std::byte> b(12);
                     if (p.rank() == 0) p.send(2, 77, b);
                   }),
               RunError);
}

TEST(Errors, ReceiveRequestDestroyedWithoutCompletion) {
  const std::string msg = run_failure(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
    std::vector<std::byte> b(4);
    if (p.rank() == 0) Request r = p.irecv(1, 0, b);
  });
  EXPECT_TRUE(contains(msg, "rank 0")) << msg;
  EXPECT_TRUE(contains(msg, "destroyed")) << msg;
}

// A run that would poll forever hits the virtual time limit instead of hanging.
TEST(Errors, VirtualTimeLimit) {
  RunOptions o;
  o.time_limit = microseconds(50);
  try {
    // A VP that keeps sending never stops by itself (a VP that only polls is a livelock, reported
    // at once: test_debugging.cpp).
    run(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
      if (p.rank() == 0)
        for (;;) p.send(1, 0, {});
    }, o);
    ADD_FAILURE() << "no error";
  } catch (const RunError& e) {
    EXPECT_TRUE(contains(e.what(), "time limit")) << e.what();
  }
}

// ---------------------------------------------------------------- machine specs

struct BadSpec {
  std::string spec;
  std::string must_name;  // the bad part, which the message must quote
  friend void PrintTo(const BadSpec& b, std::ostream* os) { *os << "'" << b.spec << "'"; }
};

class BadMachineSpec : public testing::TestWithParam<BadSpec> {};

TEST_P(BadMachineSpec, ParseMachineThrowsUsageErrorNamingTheBadPart) {
  const BadSpec c = GetParam();
  try {
    parse_machine(c.spec);
    FAIL() << "accepted '" << c.spec << "'";
  } catch (const UsageError& e) {
    EXPECT_TRUE(contains(e.what(), c.must_name)) << "'" << c.spec << "': " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Specs, BadMachineSpec,
    testing::Values(BadSpec{"", "empty"}, BadSpec{"cube:4", "cube:4"}, BadSpec{"mesh:4xx4", "4xx4"},
                    BadSpec{"mesh:0x4", "0x4"}, BadSpec{"mesh:axb", "axb"}, BadSpec{"mesh", "mesh"},
                    BadSpec{"mesh:4x4,hop_ns=abc", "hop_ns"}, BadSpec{"mesh:4x4,hop_ns=-3", "hop_ns"},
                    BadSpec{"mesh:4x4,frobnicate=1", "frobnicate"}, BadSpec{"mesh:4x4,ports=0", "ports"},
                    BadSpec{"mesh:4x4,ports=many", "ports"}, BadSpec{"mesh:4x4,packet=512", "packet"},
                    BadSpec{"mesh:4x4,packet=0+8", "packet"}, BadSpec{"mesh:4x4,buffer=lots", "buffer"},
                    BadSpec{"mesh:4x4,barrier=magic", "barrier"}, BadSpec{"mesh:4x4,hop_ns", "hop_ns"},
                    BadSpec{"torus:4,deadlock=maybe", "deadlock"}, BadSpec{"/nonexistent/m.json", "m.json"}),
    [](const testing::TestParamInfo<BadSpec>& info) { return "case" + std::to_string(info.index); });

// BUG (fixed; machines/src/text.cpp, parse_dims): std::getline(ss, part, 'x') yields no empty token
// after a trailing 'x', so "mesh:4x" parses as the 1-D mesh:4 and "mesh:4x4x" as mesh:4x4; a
// malformed spec must be a UsageError naming the dimensions.
TEST(MachineSpec, TrailingXInDimensionsIsRejected) {
  for (const char* spec : {"mesh:4x", "mesh:4x4x", "torus:8x"}) {
    try {
      const Machine m = parse_machine(spec);
      ADD_FAILURE() << "accepted '" << spec << "' as " << m.name;
    } catch (const UsageError& e) {
      EXPECT_TRUE(contains(e.what(), "dimensions")) << e.what();
    }
  }
}

TEST(MachineSpec, OptionsSetTheParametersExactly) {
  const Machine m = parse_machine(
      "mesh:2x3,send_us=1.5,send_ns_per_byte=2,recv_us=3,recv_ns_per_byte=4,probe_us=0.25,hop_ns=7,"
      "link_ns_per_byte=11,inject_ns_per_byte=13,eject_ns_per_byte=17,packet=482+30,inj_ports=2,ej_ports=3");
  EXPECT_EQ(m.nodes(), 6);
  EXPECT_EQ(m.costs.send_overhead, 1'500'000);
  EXPECT_EQ(m.costs.send_per_byte, 2'000);
  EXPECT_EQ(m.costs.recv_overhead, 3'000'000);
  EXPECT_EQ(m.costs.recv_per_byte, 4'000);
  EXPECT_EQ(m.costs.probe_cost, 250'000);
  EXPECT_EQ(m.net.hop_time, 7'000);
  EXPECT_EQ(m.net.link_byte_time, 11'000);
  EXPECT_EQ(m.net.inject_byte_time, 13'000);
  EXPECT_EQ(m.net.eject_byte_time, 17'000);
  EXPECT_EQ(m.net.packet_payload, 482);
  EXPECT_EQ(m.net.packet_header, 30);
  EXPECT_EQ(m.net.inj_ports, 2);
  EXPECT_EQ(m.net.ej_ports, 3);
  EXPECT_EQ(parse_machine("torus:8x8x8").nodes(), 512);
  EXPECT_EQ(parse_machine("mesh:16x32").topology->dims(), (std::vector<int>{16, 32}));
}

TEST(MachineSpec, JsonMachineFileAndItsErrors) {
  const std::string dir = testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return path;
  };
  const Machine m = parse_machine(
      write("ok.json", R"({"topology": "mesh:2x2", "name": "tiny", "params": {"hop_ns": 9, "buffer": "unlimited"}})"));
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.net.hop_time, 9000);
  EXPECT_EQ(m.nodes(), 4);
  struct Case {
    std::string text, must_name;
  };
  const Case bad[] = {{"{not json", "not valid JSON"},
                      {R"({"name": "x"})", "topology"},
                      {R"({"topology": 5})", "topology"},
                      {R"({"topology": "mesh:2x2", "params": {"hop_ns": "fast"}})", "params.hop_ns"},
                      {R"({"topology": "mesh:2x2", "params": {"hop_ns": [1]}})", "params.hop_ns"},
                      {R"({"topology": "mesh:2x2", "colour": "red"})", "colour"}};
  int i = 0;
  for (const auto& c : bad) {
    const std::string path = write("bad" + std::to_string(i++) + ".json", c.text);
    try {
      parse_machine(path);
      ADD_FAILURE() << "accepted " << c.text;
    } catch (const UsageError& e) {
      EXPECT_TRUE(contains(e.what(), c.must_name)) << c.text << ": " << e.what();
    }
  }
}

}  // namespace

namespace {

// A user's topology whose adaptive routing fails on one message, inside the event loop: the
// network asks it for the next channels while it moves a header, not in any VP's code.
class FailingAdaptiveRoute : public ts_test::WrappedTopology {
 public:
  using WrappedTopology::WrappedTopology;
  std::string name() const override { return "failing-adaptive"; }
  bool adaptive() const override { return true; }
  void next_channels(int s, int d, LinkId, std::vector<LinkId>&) const override {
    if (s == 3 && d == 0) throw std::runtime_error("no channel table for 3 -> 0");
    if (s == 3 && d == 1) throw 7;  // not a std::exception
  }
};

// An exception out of the event loop (here a user topology's) used to leave the scheduler with
// every other VP suspended, to be torn down with the executor; now it fails the run like any
// failure: a RunError naming the time and the cause, every VP unwound, on both executions.
TEST(Errors, ExceptionInsideTheEventLoopFailsTheRunAndUnwindsEveryVp) {
  Machine m = ts_test::prime_machine("mesh:2x2");
  m.topology = std::make_shared<FailingAdaptiveRoute>(m.topology);
  for (Execution e : kBoth)
    for (int dst : {0, 1}) {
      SCOPED_TRACE(fmt::format("execution {} dst {}", e == Execution::fibers ? "fibers" : "threads", dst));
      const std::string msg = run_failure(
          m,
          [dst](Proc& p) {
            std::vector<std::byte> b(4);
            if (p.rank() == 3) p.send(dst, 0, b);
            else if (p.rank() == dst) p.recv(3, 0, b);
            else p.recv(3, 1, b);  // waits forever: must be unwound
          },
          e);
      EXPECT_TRUE(contains(msg, "handling an event at t=")) << msg;
      EXPECT_TRUE(contains(msg, dst == 0 ? "no channel table for 3 -> 0" : "not a std::exception")) << msg;
    }
}

}  // namespace

namespace {

// RunOptions' hooks run on the VPs' own fibers or threads, at a program's start and end too, where
// no program frame would catch what they throw: a throwing hook fails the run, never the process.
TEST(Errors, ThrowingVpHookFailsTheRunOnEitherExecution) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Program ring = [](Proc& p) {
    std::vector<std::byte> b(8);
    if (p.rank() == 0) p.send(1, 0, b);
    if (p.rank() == 1) p.recv(0, 0, b);
  };
  for (Execution e : kBoth) {
    SCOPED_TRACE(e == Execution::fibers ? "fibers" : "threads");
    RunOptions o;
    o.execution = e;
    int resumes = 0;
    o.on_vp_resume = [&](int rank, Time, std::uint64_t) {
      if (rank == 2 || ++resumes > 3) throw std::runtime_error("resume hook out of order");
    };
    std::string msg = ts_test::failure_of<Error>(m, ring, o);
    EXPECT_TRUE(contains(msg, "resume hook out of order")) << msg;

    RunOptions q;
    q.execution = e;
    q.on_vp_pause = [](int rank) {
      if (rank == 2) throw 3;  // not a std::exception, at the end of rank 2's program
    };
    msg = ts_test::failure_of<Error>(m, ring, q);
    EXPECT_TRUE(contains(msg, "rank 2's on_vp_pause hook failed")) << msg;
  }
}

}  // namespace
