#include "combine.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace touchstone::algorithms {

namespace {
[[noreturn]] void no_block_for(int rank) {
  throw std::logic_error(fmt::format("combined message holds no block for rank {}", rank));
}

std::size_t index_of(const std::vector<int>& ranks, int rank) {
  const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end() || *it != rank) no_block_for(rank);
  return static_cast<std::size_t>(it - ranks.begin());
}

// Calls f(i, j) for every rank wanted[i], where j is its place in `held`; both lists increasing.
// A rank is usually the one after the last found (the blocks of a submachine lie together), so
// that place is tried first and a binary search from there runs only at a gap: a gather's
// destinations extract and combine about p log2 p blocks in all, and a search for each cost
// log2 p compares more.
template <class F>
void for_each_held(const std::vector<int>& wanted, const std::vector<int>& held, F f) {
  auto at = held.begin();
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const int r = wanted[i];
    if (at == held.end() || *at != r) at = std::lower_bound(at, held.end(), r);
    if (at == held.end() || *at != r) no_block_for(r);
    f(i, static_cast<std::size_t>(at - held.begin()));
    ++at;
  }
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

std::span<const std::byte> BlockView::at(int rank) const { return block(index_of(ranks_, rank)); }

std::span<const std::byte> BlockView::block(std::size_t i) const { return data_.subspan(i * size_, size_); }

Blocks::Blocks(std::vector<int> ranks, std::size_t size) : ranks_(std::move(ranks)), size_(size) {
  // The lists come sorted, or as two sorted halves (a destination's own part and the other):
  // merged in one pass where a sort would take log2 p passes.
  const auto run = std::is_sorted_until(ranks_.begin(), ranks_.end());
  if (std::is_sorted(run, ranks_.end()))
    std::inplace_merge(ranks_.begin(), run, ranks_.end());
  else
    std::sort(ranks_.begin(), ranks_.end());
  data_.resize(ranks_.size() * size_);
}

std::span<std::byte> Blocks::at(int rank) { return block(index_of(ranks_, rank)); }

std::span<std::byte> Blocks::block(std::size_t i) { return std::span<std::byte>(data_).subspan(i * size_, size_); }

Blocks combine(Proc& p, const BlockView& from, std::vector<int> ranks) {
  Blocks out(std::move(ranks), from.block_size());
  copy_charged(p, [&](Copier& copy) {
    for_each_held(out.ranks(), from.ranks(), [&](std::size_t i, std::size_t j) { copy(out.block(i), from.block(j)); });
  });
  return out;
}

void extract(Proc& p, const BlockView& msg, Blocks& into) {
  copy_charged(p, [&](Copier& copy) {
    for_each_held(msg.ranks(), into.ranks(), [&](std::size_t i, std::size_t j) { copy(into.block(j), msg.block(i)); });
  });
}

void extract(Proc& p, const BlockView& msg, std::span<std::byte> by_rank) {
  const std::size_t size = msg.block_size();
  copy_charged(p, [&](Copier& copy) {
    for (int r : msg.ranks()) copy(by_rank.subspan(static_cast<std::size_t>(r) * size, size), msg.at(r));
  });
}

}  // namespace touchstone::algorithms
