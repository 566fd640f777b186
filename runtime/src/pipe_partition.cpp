#include "touchstone/pipe_partition.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "touchstone/error.hpp"

namespace touchstone {

namespace {

bool read_all(int fd, void* p, std::size_t n) {
  for (auto* b = static_cast<char*>(p); n > 0;) {
    const ssize_t k = ::read(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    b += k, n -= static_cast<std::size_t>(k);
  }
  return true;
}

bool write_all(int fd, const void* p, std::size_t n) {
  for (const auto* b = static_cast<const char*>(p); n > 0;) {
    const ssize_t k = ::write(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    b += k, n -= static_cast<std::size_t>(k);
  }
  return true;
}

// A length, then the bytes.
bool write_bytes(int fd, std::span<const std::byte> bytes) {
  const std::uint64_t n = bytes.size();
  return write_all(fd, &n, sizeof n) && write_all(fd, bytes.data(), bytes.size());
}

std::optional<std::vector<std::byte>> read_bytes(int fd) {
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n)) return std::nullopt;
  std::vector<std::byte> bytes(n);
  if (!read_all(fd, bytes.data(), bytes.size())) return std::nullopt;
  return bytes;
}

}  // namespace

PipePartition::PipePartition(int in, int out, int index, int count)
    : in_(in), out_(out), index_(index), count_(count) {}

PipePartition::~PipePartition() {
  ::close(in_);
  ::close(out_);
}

std::vector<std::byte> PipePartition::all_gather(std::span<const std::byte> mine) {
  const auto gone = [] { return RunError("the split run's relay (touchstone-distributed) has gone"); };
  if (!write_bytes(out_, mine)) throw gone();
  std::uint8_t ok = 0;
  if (!read_all(in_, &ok, 1)) throw gone();
  if (!ok) throw RunError("another process of the split run ended before this one (its report says why)");
  std::optional<std::vector<std::byte>> all = read_bytes(in_);
  if (!all) throw gone();
  return std::move(*all);
}

std::optional<std::vector<std::byte>> relay_take_part(int from_child) { return read_bytes(from_child); }

bool relay_answer(int to_child, const std::vector<std::byte>* all) {
  const std::uint8_t ok = all ? 1 : 0;
  return write_all(to_child, &ok, 1) && (!all || write_bytes(to_child, *all));
}

}  // namespace touchstone
