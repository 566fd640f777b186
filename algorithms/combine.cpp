#include "combine.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace touchstone::algorithms {

namespace {
std::size_t index_of(const std::vector<int>& ranks, int rank) {
  const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end() || *it != rank)
    throw std::logic_error(fmt::format("combined message holds no block for rank {}", rank));
  return static_cast<std::size_t>(it - ranks.begin());
}
}  // namespace

void Copier::operator()(std::span<std::byte> to, std::span<const std::byte> from) {
  if (from.empty()) return;
  if (!phantom_) std::memcpy(to.data(), from.data(), from.size());
  if (from.data() != from_end_ || to.data() != to_end_) ++pieces_;
  bytes_ += from.size();
  from_end_ = from.data() + from.size();
  to_end_ = to.data() + from.size();
}

BlockView::BlockView(std::vector<int> ranks, std::span<const std::byte> data, std::size_t size)
    : ranks_(std::move(ranks)), data_(data), size_(size) {
  if (data_.size() != ranks_.size() * size_) throw std::logic_error("BlockView: data does not hold one block per rank");
}

BlockView BlockView::all(int n, std::span<const std::byte> data, std::size_t size) {
  std::vector<int> ranks(static_cast<std::size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  return BlockView(std::move(ranks), data.first(static_cast<std::size_t>(n) * size), size);
}

std::span<const std::byte> BlockView::at(int rank) const { return data_.subspan(index_of(ranks_, rank) * size_, size_); }

Blocks::Blocks(std::vector<int> ranks, std::size_t size) : ranks_(std::move(ranks)), size_(size) {
  std::sort(ranks_.begin(), ranks_.end());
  data_.resize(ranks_.size() * size_);
}

std::span<std::byte> Blocks::at(int rank) {
  return std::span<std::byte>(data_).subspan(index_of(ranks_, rank) * size_, size_);
}

Blocks combine(Proc& p, const BlockView& from, std::vector<int> ranks) {
  Blocks out(std::move(ranks), from.block_size());
  copy_charged(p, [&](Copier& copy) {
    for (int r : out.ranks()) copy(out.at(r), from.at(r));
  });
  return out;
}

void extract(Proc& p, const BlockView& msg, Blocks& into) {
  copy_charged(p, [&](Copier& copy) {
    for (int r : msg.ranks()) copy(into.at(r), msg.at(r));
  });
}

void extract(Proc& p, const BlockView& msg, std::span<std::byte> by_rank) {
  const std::size_t size = msg.block_size();
  copy_charged(p, [&](Copier& copy) {
    for (int r : msg.ranks()) copy(by_rank.subspan(static_cast<std::size_t>(r) * size, size), msg.at(r));
  });
}

}  // namespace touchstone::algorithms
