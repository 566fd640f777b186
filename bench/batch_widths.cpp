// Batch widths (docs/parallel.md, "Order of work", step 1): how many VPs resume at one virtual
// time, for catalog algorithms. VPs resumed at the same time could run their code concurrently
// with the same results (stage 1 of the plan), so these bound what running VP code on W host
// cores could gain: segments / rounds(W), where rounds(W) = sum over instants of ceil(width / W),
// if every segment cost the same host time. The counts are virtual figures: they depend on the
// model, never on the host.
//
// --host-time also times every segment on the host (RunOptions::on_vp_resume to on_vp_pause) and
// weights the bound by it: on W cores an instant takes at least max(its longest segment, its
// segments' sum / W), and the event loop between segments stays serial. Those are host
// measurements: they vary from run to run, and the time inside a segment includes the API calls
// that stage 1 would replay serially, so the estimate is an upper bound.
//
//   build/bin/batch_widths --machine mesh:16x16 --algorithms alltoall/all,scatter/all,gather/all --sizes 16,4096
//   build/bin/batch_widths --algorithms alltoall/1-lev-xor --sizes 1024,16384 --real --host-time
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "cli/parse_command_line.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using touchstone::BatchStats;

std::string bound(const BatchStats& b, std::size_t i) {
  return b.rounds[i] ? fmt::format("{:.2f}", static_cast<double>(b.segments) / static_cast<double>(b.rounds[i])) : "-";
}

// The widths of docs/parallel.md's extension of a batch to a window [T, T + lambda): the VPs
// resumed from T, the first resumption after the previous window, up to T + lambda.
struct WindowCounter {
  touchstone::Time lambda = 0;
  touchstone::Time start = -1;
  std::uint64_t width = 0, windows = 0, rounds[BatchStats::kCoreCounts] = {};
  void resume(touchstone::Time now) {
    if (start < 0 || now >= start + lambda) {
      close();
      start = now;
    }
    ++width;
  }
  void close() {
    if (!width) return;
    ++windows;
    for (std::size_t i = 0; i < BatchStats::kCoreCounts; ++i) {
      const auto w = static_cast<std::uint64_t>(BatchStats::kCores[i]);
      rounds[i] += (width + w - 1) / w;
    }
    width = 0;
  }
};

using Clock = std::chrono::steady_clock;

// Host time of the segments, gathered per instant (the segments of one instant are consecutive).
struct SegmentTimer {
  static constexpr std::size_t kW = BatchStats::kCoreCounts;
  Clock::time_point started;
  touchstone::Time instant = -1;
  double instant_sum = 0, instant_max = 0;
  double total = 0;          // all segments, seconds
  double parallel[kW] = {};  // sum over instants of max(longest, sum / W)

  void resume(touchstone::Time now) {
    if (now != instant) close();
    instant = now;
    started = Clock::now();
  }
  void pause() {
    const double s = std::chrono::duration<double>(Clock::now() - started).count();
    instant_sum += s;
    instant_max = std::max(instant_max, s);
  }
  void close() {
    total += instant_sum;
    for (std::size_t i = 0; i < kW; ++i)
      parallel[i] += std::max(instant_max, instant_sum / BatchStats::kCores[i]);
    instant_sum = instant_max = 0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"batch widths: VPs resumed per virtual instant, and the speed-up bound of running VP code on W cores"};
  std::string machine = "mesh:16x16", list = "alltoall/all,scatter/all,gather/all";
  std::vector<std::size_t> sizes = {16, 4096};
  bool real = false, host_time = false;
  double window_us = 0;
  app.add_option("--machine", machine, "machine spec")->capture_default_str();
  app.add_flag("--real", real, "real payloads (filled, copied and checked), not phantom ones");
  app.add_flag("--host-time", host_time, "also time every segment on the host and weight the bound by it");
  app.add_option("--window-us", window_us,
                 "also count batches over windows of this many virtual microseconds (docs/parallel.md's extension)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--algorithms", list, "comma-separated names, or COLLECTIVE/all")->capture_default_str();
  app.add_option("--sizes", sizes, "message sizes in bytes")->delimiter(',')->capture_default_str();
  if (const auto code = touchstone::cli::parse_command_line(app, argc, argv)) return *code;
  try {
    const touchstone::Machine m = touchstone::parse_machine(machine);
    touchstone::RunOptions o;
    o.phantom_payloads = !real;  // the batches do not depend on the bytes; the host time does
    SegmentTimer timer;
    WindowCounter window;
    const bool windows = window_us > 0;
    if (host_time || windows) {
      o.on_vp_resume = [&](int, touchstone::Time now, std::uint64_t) {
        if (host_time) timer.resume(now);
        if (windows) window.resume(now);
      };
    }
    if (host_time) o.on_vp_pause = [&timer](int) { timer.pause(); };
    fmt::print("{} ({} VPs), {} payloads; bound(W) = segments / sum over instants of ceil(width / W){}\n", machine,
               m.nodes(), real ? "real" : "phantom",
               host_time ? "; host: seconds of the run, the share in VP segments, and the bound weighted by "
                           "their host time (loop serial, an instant at least its longest segment)"
                         : "");
    fmt::print("{:<28} {:>6} {:>10} {:>9} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6}{}\n", "algorithm", "size", "segments",
               "instants", "mean", "widest", "W=2", "W=4", "W=8", "W=16",
               fmt::format("{}{}", host_time ? "   host s  VP share  host W=2  W=4  W=8 W=16" : "",
                           windows ? fmt::format("  windows of {} us: count  W=2  W=4  W=8 W=16", window_us) : ""));
    for (const auto* a : touchstone::algorithms::select(list))
      for (const std::size_t size : sizes) {
        const touchstone::algorithms::Args args{size, 0, real};
        try {
          timer = SegmentTimer{};
          window = WindowCounter{};
          window.lambda = static_cast<touchstone::Time>(window_us * 1e6);  // picoseconds
          const auto start = Clock::now();
          const auto r = touchstone::run(m, [&](touchstone::Proc& p) { a->program(p, args); }, o);
          const double run_s = std::chrono::duration<double>(Clock::now() - start).count();
          const BatchStats& b = r.stats.batches;
          fmt::print("{:<28} {:>6} {:>10} {:>9} {:>7.2f} {:>7} {:>6} {:>6} {:>6} {:>6}", a->name, size, b.segments,
                     b.instants, static_cast<double>(b.segments) / static_cast<double>(b.instants), b.widest,
                     bound(b, 0), bound(b, 1), bound(b, 2), bound(b, 3));
          if (host_time) {
            timer.close();
            const double serial = std::max(0.0, run_s - timer.total);
            fmt::print(" {:>8.3f} {:>8.0f}% ", run_s, 100 * timer.total / run_s);
            for (std::size_t i = 0; i < SegmentTimer::kW; ++i)
              fmt::print(" {:>5.2f}", run_s / (serial + timer.parallel[i]));
          }
          if (windows) {
            window.close();
            fmt::print("  {:>26}", window.windows);
            for (const auto rounds : window.rounds)
              fmt::print(" {:>5.2f}", static_cast<double>(b.segments) / static_cast<double>(rounds));
          }
          fmt::print("\n");
        } catch (const touchstone::Error& e) {
          fmt::print("{:<28} {:>6} not run: {}\n", a->name, size, e.what());
        }
        std::fflush(stdout);
      }
  } catch (const touchstone::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
