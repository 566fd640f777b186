// libFuzzer harness: the texts the tools read back from runs, which a user names and may have edited
// or truncated. The first byte picks which; the rest is the text:
//   0: an order log (`touchstone diff`): compared with itself it never differs, and against a real
//      log the report is made without a failure;
//   1: a saved sweep's CSV (`touchstone table`, `touchstone plot`): every record read has a makespan
//      and host figures in range;
//   2: a forced schedule (`--schedule`, from `touchstone run --explore`): it reads back as printed.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/diff.hpp"
#include "invariants.hpp"
#include "touchstone/experiment/experiment.hpp"

namespace {
// What `touchstone run --machine mesh:1x2 --algorithm selftest/ring --size 16 --order-log F` writes.
const std::string kLog =
    "# per-VP message order on mesh:1x2: every send and receive in program order\n"
    "VP 0:\n  t=0.000000 us  send #0 to 1 tag 0 size 16\n"
    "  t=12.280000 us  recv #1 from 1 tag 0 size 16 (arrived 12.280000 us)\n"
    "VP 1:\n  t=0.000000 us  send #1 to 0 tag 0 size 16\n"
    "  t=12.280000 us  recv #0 from 0 tag 0 size 16 (arrived 12.280000 us)\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace touchstone;
  switch (data[0] % 3) {
    case 0:
      ts_fuzz::expect_clean([&] {
        bool differ = true;
        cli::diff_order_logs(text, text, "fuzz", "fuzz", differ);
        ts_fuzz::check(!differ, "an order log differs from itself");
        cli::diff_order_logs(text, kLog, "fuzz", "ring", differ);
        cli::diff_order_logs(kLog, text, "ring", "fuzz", differ);
      });
      break;
    case 1:
      ts_fuzz::expect_clean([&] {
        for (const experiment::Record& r : experiment::parse_records_csv(text, "fuzz.csv")) {
          ts_fuzz::check(r.result.makespan >= 0, "a negative makespan");
          ts_fuzz::check(std::isfinite(r.result.host_seconds) && r.result.host_seconds >= 0, "host seconds out of range");
          ts_fuzz::check(std::isfinite(r.peak_rss_mb) && r.peak_rss_mb >= 0, "peak RSS out of range");
        }
      });
      break;
    default:
      ts_fuzz::expect_clean([&] {
        // (Ranks and calls are checked against the machine when the run starts: ForcedSchedule.)
        const std::vector<ForcedMatch> schedule = parse_schedule(text);
        ts_fuzz::check(parse_schedule(format_schedule(schedule)) == schedule, "a schedule that does not read back");
      });
  }
  return 0;
}
