// Three classic message-ordering bugs, small enough to read in a minute (docs/debugging.md walks
// through finding each with Touchstone's tools). Each is a Program for touchstone::run; the
// example_* executables run them with the command line's debugging options.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <touchstone/touchstone.hpp>

namespace bugs {

using touchstone::Proc;

inline std::span<const std::byte> as_bytes(const std::int64_t& x) { return std::as_bytes(std::span(&x, 1)); }
inline std::span<std::byte> as_writable(std::int64_t& x) { return std::as_writable_bytes(std::span(&x, 1)); }

/// Bug 1, a wildcard receive whose match decides the result (mesh:2x2). Workers 1..3 compute for
/// rank x 10 us and send rank x 100 to rank 0, which collects with any_source and stores each
/// result in the slot of its arrival order instead of the slot of its source. On this machine the
/// workers finish in rank order, so the results land in the right slots; any other order puts
/// them in the wrong ones and the final check fails.
inline void wildcard_collect(Proc& p) {
  if (p.rank() != 0) {
    p.compute(touchstone::microseconds(10) * p.rank());
    const std::int64_t result = 100 * p.rank();
    p.annotate("worker sends its result");
    p.send(0, 0, as_bytes(result));
    return;
  }
  std::vector<std::int64_t> slot(static_cast<std::size_t>(p.size()), 0);
  for (int i = 1; i < p.size(); ++i) {
    p.annotate("collect");
    p.recv(touchstone::any_source, 0, as_writable(slot[static_cast<std::size_t>(i)]));  // BUG: slot i, not status.source
  }
  for (int i = 1; i < p.size(); ++i)
    if (slot[static_cast<std::size_t>(i)] != 100 * i)
      throw std::runtime_error("slot " + std::to_string(i) + " holds " + std::to_string(slot[static_cast<std::size_t>(i)]) +
                               ", expected " + std::to_string(100 * i));
}

/// Bug 2, a send-send exchange that deadlocks only when receive buffers are bounded (mesh:1x2 with
/// buffer=65536). Both ranks send two 64 KiB messages to each other before receiving either. With
/// unlimited buffering (the default) both sends complete into the receiver's memory; with a 64 KiB
/// receive buffer the first message fills it, the second waits in the network for space that only
/// a receive would free, and both ranks wait in their second send.
inline void send_send_exchange(Proc& p) {
  const int other = 1 - p.rank();
  std::vector<std::byte> out(64 * 1024), in(64 * 1024);
  p.annotate("first send");
  p.send(other, 0, out);
  p.annotate("second send");
  p.send(other, 1, out);  // BUG: unsafe; post the receives first (irecv) or use sendrecv
  p.annotate("receives");
  p.recv(other, 0, in);
  p.recv(other, 1, in);
}

/// Bug 3, a message that overtakes another through a different route (mesh:2x2,ports=2). Rank 0
/// starts a 64 KiB data message to rank 3, then tells rank 2 "data sent"; rank 2 forwards a flag
/// to rank 3. Rank 3 receives with any_source and assumes the data comes first, since it was sent
/// first. The flag's route (0 -> 2 -> 3) is short and the data is long: the flag overtakes it.
inline void overtaking_flag(Proc& p) {
  const std::int64_t flag = 1;
  std::int64_t got = 0;
  if (p.rank() == 0) {
    std::vector<std::byte> data(64 * 1024);
    touchstone::Request r = p.isend(3, 0, data);
    p.annotate("tell rank 2");
    p.send(2, 0, as_bytes(flag));
    p.wait(r);
  } else if (p.rank() == 2) {
    p.recv(0, 0, as_writable(got));
    p.annotate("forward the flag");
    p.send(3, 0, as_bytes(flag));
  } else if (p.rank() == 3) {
    std::vector<std::byte> buf(64 * 1024);
    p.annotate("expect the data");
    const touchstone::Status first = p.recv(touchstone::any_source, 0, buf);  // BUG: assumes sending order
    p.annotate("then the flag");
    p.recv(touchstone::any_source, 0, buf);
    if (first.source != 0)
      throw std::runtime_error("the flag from rank " + std::to_string(first.source) + " arrived before the data");
  }
}

}  // namespace bugs
