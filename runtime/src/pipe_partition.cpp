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
  const std::uint8_t kind = 0;
  if (!write_all(out_, &kind, 1) || !write_bytes(out_, mine))
    throw RunError("the split run's relay (touchstone-distributed) has gone");
  return answer();
}

std::vector<std::byte> PipePartition::all_to_all(std::span<const std::byte> mine, std::span<const std::size_t> to,
                                                 std::span<const std::size_t> from) {
  std::vector<std::uint64_t> sizes(to.begin(), to.end());
  sizes.insert(sizes.end(), from.begin(), from.end());
  const std::uint8_t kind = 1;
  if (!write_all(out_, &kind, 1) || !write_all(out_, sizes.data(), sizes.size() * sizeof(std::uint64_t)) ||
      !write_bytes(out_, mine))
    throw RunError("the split run's relay (touchstone-distributed) has gone");
  return answer();
}

std::vector<std::byte> PipePartition::answer() {
  const auto gone = [] { return RunError("the split run's relay (touchstone-distributed) has gone"); };
  std::uint8_t ok = 0;
  if (!read_all(in_, &ok, 1)) throw gone();
  if (!ok) throw RunError("another process of the split run ended before this one (its report says why)");
  std::optional<std::vector<std::byte>> all = read_bytes(in_);
  if (!all) throw gone();
  return std::move(*all);
}

std::optional<RelayPart> relay_take_part(int from_child, int count) {
  std::uint8_t kind = 0;
  if (!read_all(from_child, &kind, 1)) return std::nullopt;
  RelayPart part;
  part.all_to_all = kind == 1;
  if (part.all_to_all) {
    std::vector<std::uint64_t> sizes(2 * static_cast<std::size_t>(count));
    if (!read_all(from_child, sizes.data(), sizes.size() * sizeof(std::uint64_t))) return std::nullopt;
    part.to.assign(sizes.begin(), sizes.begin() + count);
    part.from.assign(sizes.begin() + count, sizes.end());
  }
  std::optional<std::vector<std::byte>> bytes = read_bytes(from_child);
  if (!bytes) return std::nullopt;
  part.bytes = std::move(*bytes);
  return part;
}

bool relay_answer(int to_child, const std::vector<std::byte>* all) {
  const std::uint8_t ok = all ? 1 : 0;
  return write_all(to_child, &ok, 1) && (!all || write_bytes(to_child, *all));
}

}  // namespace touchstone
