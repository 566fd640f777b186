#include "cli/distributed.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone::cli {

namespace {

// The relay's protocol: this process writes its part (8-byte length, bytes); the relay answers one
// byte, 1 and then the concatenation of every process's part (8-byte length, bytes), or 0 when
// another process has ended before reaching this swap (its own report says why).
class PipePartition final : public Partition {
 public:
  PipePartition(int in, int out, int index, int count) : in_(in), out_(out), index_(index), count_(count) {}
  ~PipePartition() override {
    ::close(in_);
    ::close(out_);
  }
  PipePartition(const PipePartition&) = delete;
  PipePartition& operator=(const PipePartition&) = delete;
  int index() const override { return index_; }
  int count() const override { return count_; }
  std::vector<std::byte> all_gather(std::span<const std::byte> mine) override {
    const std::uint64_t n = mine.size();
    write_all(&n, sizeof n);
    write_all(mine.data(), mine.size());
    std::uint8_t ok = 0;
    read_all(&ok, 1);
    if (!ok) throw RunError("another process of the split run ended before this one (its report says why)");
    std::uint64_t total = 0;
    read_all(&total, sizeof total);
    std::vector<std::byte> all(total);
    read_all(all.data(), all.size());
    return all;
  }

 private:
  void write_all(const void* p, std::size_t n) {
    for (const auto* b = static_cast<const char*>(p); n > 0;) {
      const ssize_t k = ::write(out_, b, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) throw RunError("the split run's relay (touchstone-distributed) has gone");
      b += k, n -= static_cast<std::size_t>(k);
    }
  }
  void read_all(void* p, std::size_t n) {
    for (auto* b = static_cast<char*>(p); n > 0;) {
      const ssize_t k = ::read(in_, b, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) throw RunError("the split run's relay (touchstone-distributed) has gone");
      b += k, n -= static_cast<std::size_t>(k);
    }
  }
  int in_, out_, index_, count_;
};

}  // namespace

std::shared_ptr<Partition> pipe_partition(const std::string& spec) {
  int in = -1, out = -1, index = -1, count = 0, used = 0;
  if (std::sscanf(spec.c_str(), "%d,%d,%d,%d%n", &in, &out, &index, &count, &used) != 4 ||
      used != static_cast<int>(spec.size()) || in < 0 || out < 0 || count < 1 || index < 0 || index >= count)
    throw UsageError(fmt::format("--split-pipe: expected READ_FD,WRITE_FD,PROCESS,PROCESSES, got '{}'", spec));
  return std::make_shared<PipePartition>(in, out, index, count);
}

}  // namespace touchstone::cli
