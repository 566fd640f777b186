#include "touchstone/pipe_partition.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <utility>

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

// Writes a message, its lead, its sizes (an all-to-all's) and its bytes, in as few system calls as
// the pipe takes: one per message where it took one per field. A system call costs microseconds
// (1.8 us for a one-byte write on the development host's virtual machine, docs/parallel.md), and
// a split run swaps thousands of times.
bool write_all(int fd, std::span<const std::byte> lead, std::span<const std::byte> sizes,
               std::span<const std::byte> bytes) {
  std::array<iovec, 3> io{};
  std::size_t n = 0;
  for (const auto& piece : {lead, sizes, bytes})
    if (!piece.empty()) io[n++] = iovec{const_cast<std::byte*>(piece.data()), piece.size()};
  for (iovec* v = io.data(); n > 0;) {
    const ssize_t k = ::writev(fd, v, static_cast<int>(n));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    for (auto done = static_cast<std::size_t>(k); done > 0;) {
      const std::size_t step = std::min(done, v->iov_len);
      v->iov_base = static_cast<char*>(v->iov_base) + step;
      v->iov_len -= step;
      done -= step;
      if (v->iov_len == 0) ++v, --n;
    }
  }
  return true;
}

template <class T>
std::span<const std::byte> bytes_of(const T& value) {
  return std::as_bytes(std::span<const T>(&value, 1));
}

// What leads every message: its kind (the child's request, or the relay's 1 for an answer and 0
// for "another process ended") and the length of what follows.
struct Lead {
  std::uint64_t kind = 0;
  std::uint64_t length = 0;
};

// The lead and what follows it: two reads.
std::optional<std::pair<Lead, std::vector<std::byte>>> read_message(int fd) {
  Lead lead;
  if (!read_all(fd, &lead, sizeof lead)) return std::nullopt;
  std::vector<std::byte> body(lead.length);
  if (!read_all(fd, body.data(), body.size())) return std::nullopt;
  return std::pair{lead, std::move(body)};
}

// What the child's run fails with when the relay's end of a pipe is closed.
RunError relay_gone() { return RunError("the split run's relay (touchstone-distributed) has gone"); }

}  // namespace

PipePartition::PipePartition(int in, int out, int index, int count)
    : in_(in), out_(out), index_(index), count_(count) {}

PipePartition::~PipePartition() {
  ::close(in_);
  ::close(out_);
}

std::vector<std::byte> PipePartition::all_gather(std::span<const std::byte> mine) {
  const Lead lead{0, mine.size()};
  if (!write_all(out_, bytes_of(lead), {}, mine)) throw relay_gone();
  return answer();
}

std::vector<std::byte> PipePartition::all_to_all(std::span<const std::byte> mine, std::span<const std::size_t> to,
                                                 std::span<const std::size_t> from) {
  std::vector<std::uint64_t> sizes(to.begin(), to.end());
  sizes.insert(sizes.end(), from.begin(), from.end());
  const std::span<const std::byte> size_bytes = std::as_bytes(std::span<const std::uint64_t>(sizes));
  const Lead lead{1, size_bytes.size() + mine.size()};
  if (!write_all(out_, bytes_of(lead), size_bytes, mine)) throw relay_gone();
  return answer();
}

std::vector<std::byte> PipePartition::answer() {
  auto message = read_message(in_);
  if (!message) throw relay_gone();
  if (message->first.kind == 0)
    throw RunError("another process of the split run ended before this one (its report says why)");
  return std::move(message->second);
}

std::optional<RelayPart> relay_take_part(int from_child, int count) {
  auto message = read_message(from_child);
  if (!message) return std::nullopt;
  RelayPart part;
  part.all_to_all = message->first.kind == 1;
  std::vector<std::byte>& body = message->second;
  if (part.all_to_all) {
    const std::size_t size_bytes = 2 * static_cast<std::size_t>(count) * sizeof(std::uint64_t);
    if (body.size() < size_bytes) return std::nullopt;
    std::vector<std::uint64_t> sizes(2 * static_cast<std::size_t>(count));
    std::memcpy(sizes.data(), body.data(), size_bytes);
    part.to.assign(sizes.begin(), sizes.begin() + count);
    part.from.assign(sizes.begin() + count, sizes.end());
    body.erase(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(size_bytes));
  }
  part.bytes = std::move(body);
  return part;
}

bool relay_answer(int to_child, const std::vector<std::byte>* all) {
  const Lead lead{all ? 1u : 0u, all ? all->size() : 0u};
  return write_all(to_child, bytes_of(lead), {}, all ? std::span<const std::byte>(*all) : std::span<const std::byte>());
}

}  // namespace touchstone
