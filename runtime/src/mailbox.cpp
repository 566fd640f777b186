#include "mailbox.hpp"

#include <algorithm>
#include <span>

namespace touchstone::detail {

namespace {

// Takes x out of the doubly linked queue (head, tail): posted receives and unexpected messages.
template <class T>
void unlink(T* x, T*& head, T*& tail) {
  (x->prev ? x->prev->next : head) = x->next;
  (x->next ? x->next->prev : tail) = x->prev;
  x->next = x->prev = nullptr;
}

constexpr std::uint64_t kNotQueued = ~0ULL;

// x leaves its queue (head, tail, count). An indexed queue forgets x's position, and drops its
// index once emptied (`drop_index`): numbers start again from 0 with the next entry.
template <class T, class Positions, class DropIndex>
void take_out(T* x, T*& head, T*& tail, std::size_t& count, bool indexed, Positions& positions, DropIndex drop_index) {
  unlink(x, head, tail);
  --count;
  if (!indexed) return;
  positions.remove(x->queued);
  x->queued = kNotQueued;
  if (count == 0) drop_index();
}

// A receive whose pattern takes more than one source or tag.
bool wild(const Op& op) { return op.src == any_source || op.tag == any_tag; }

}  // namespace

// ---------------------------------------------------------------- Positions

std::uint64_t Mailbox::Positions::add() {
  const std::uint64_t k = numbered_++;
  const std::size_t cap = tree_.empty() ? 0 : tree_.size() - 1;
  alive_.push_back(1);
  if (k >= cap) {
    // Grow to twice the size and rebuild in O(n).
    const std::size_t n = std::max<std::size_t>(64, 2 * cap);
    tree_.assign(n + 1, 0);
    for (std::size_t i = 1; i <= n; ++i) {
      if (i - 1 < alive_.size()) tree_[i] += alive_[i - 1];
      const std::size_t j = i + (i & (~i + 1));
      if (j <= n) tree_[j] += tree_[i];
    }
  } else {
    bump(k, +1);
  }
  ++count_;
  return k;
}

void Mailbox::Positions::remove(std::uint64_t k) {
  alive_[k] = 0;
  bump(k, -1);
  --count_;
}

void Mailbox::Positions::bump(std::uint64_t k, int delta) {
  const std::size_t n = tree_.size() - 1;
  for (std::size_t i = k + 1; i <= n; i += i & (~i + 1)) tree_[i] += delta;
}

std::uint64_t Mailbox::Positions::below(std::uint64_t n) const {
  std::int64_t s = 0;
  for (std::size_t i = std::min<std::uint64_t>(n, numbered_); i > 0; i -= i & (~i + 1)) s += tree_[i];
  return static_cast<std::uint64_t>(s);
}

// ---------------------------------------------------------------- buckets

template <class T>
T* Mailbox::Bucket<T>::front(const Mailbox* box) {
  while (head < items.size() &&
         (items[head].second->queued != items[head].first || items[head].second->queued_in != box))
    ++head;
  if (head == items.size()) {
    items.clear();
    head = 0;
    return nullptr;
  }
  if (head >= 64 && 2 * head >= items.size()) {
    items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
  }
  return items[head].second;
}

void Mailbox::index_posted(Op* op) {
  op->queued = posted_.add();
  op->queued_in = this;
  posted_in_order_ &= posted_at_.empty() || posted_at_.back() <= op->posted;
  posted_at_.push_back(op->posted);
  posted_index_[Key{op->ctx, op->src, op->tag}].push(op->queued, op);
}

void Mailbox::index_unexpected(Msg* m) {
  m->queued = unexpected_.add();
  m->queued_in = this;
  unexpected_index_[Key{m->ctx, m->src, m->tag}].push(m->queued, m);
  if (!unexpected_wild_indexed_) return;
  for (const Key& k : {Key{m->ctx, any_source, m->tag}, Key{m->ctx, m->src, any_tag}, Key{m->ctx, any_source, any_tag}})
    unexpected_index_[k].push(m->queued, m);
}

void Mailbox::index_unexpected_wild() {
  unexpected_wild_indexed_ = true;
  for (Msg* m = unexpected_head_; m; m = m->next)
    for (const Key& k : {Key{m->ctx, any_source, m->tag}, Key{m->ctx, m->src, any_tag}, Key{m->ctx, any_source, any_tag}})
      unexpected_index_[k].push(m->queued, m);
}

// ---------------------------------------------------------------- matching

Msg* Mailbox::post(Op* op) {
  // The earliest-arrived matching message that is already here; anything arriving later is later.
  if (unexpected_indexed_) {
    if (!unexpected_wild_indexed_ && wild(*op)) index_unexpected_wild();
    const auto it = unexpected_index_.find(Key{op->ctx, op->src, op->tag});
    if (Msg* m = it != unexpected_index_.end() ? it->second.front(this) : nullptr) {
      op->examined += static_cast<std::uint32_t>(unexpected_.below(m->queued + 1));
      take_unexpected(m);
      return m;
    }
    op->examined += static_cast<std::uint32_t>(unexpected_count_);
  } else {
    for (Msg* m = unexpected_head_; m; m = m->next)
      if (++op->examined, matches(*op, *m)) {
        take_unexpected(m);
        return m;
      }
  }
  op->prev = posted_tail_;
  (posted_tail_ ? posted_tail_->next : posted_head_) = op;
  posted_tail_ = op;
  ++posted_count_;
  posted_wild_ += wild(*op);
  if (posted_indexed_) {
    index_posted(op);
  } else if (posted_count_ > kIndexFrom) {
    posted_indexed_ = true;
    for (Op* o = posted_head_; o; o = o->next) index_posted(o);
  }
  return nullptr;
}

std::uint64_t Mailbox::posted_by(Time t) const {
  return static_cast<std::uint64_t>(std::upper_bound(posted_at_.begin(), posted_at_.end(), t) - posted_at_.begin());
}

Op* Mailbox::search(const Msg& m, Time t, std::uint64_t* examined) {
  Op* match = nullptr;
  if (posted_indexed_) {
    const Key keys[] = {Key{m.ctx, m.src, m.tag}, Key{m.ctx, any_source, m.tag}, Key{m.ctx, m.src, any_tag},
                        Key{m.ctx, any_source, any_tag}};
    for (const Key& k : std::span(keys, posted_wild_ > 0 ? 4 : 1)) {
      const auto it = posted_index_.find(k);
      if (it == posted_index_.end()) continue;
      if (Op* op = it->second.front(this); op && (!match || op->queued < match->queued)) match = op;
    }
    if (!examined) return match;
    // A linear walk stops at the match (or walks everything) and counts the receives posted by t.
    const std::uint64_t walked = match ? match->queued + 1 : posted_.numbered();
    if (posted_in_order_) {
      *examined += posted_.below(std::min(walked, posted_by(t)));
    } else {
      for (std::uint64_t k = 0; k < walked; ++k) *examined += posted_.queued(k) && posted_at_[k] <= t;
    }
  } else {
    std::uint64_t walked = 0;
    for (Op* op = posted_head_; op && !match; op = op->next)
      if (walked += op->posted <= t, matches(*op, m)) match = op;
    if (examined) *examined += walked;
  }
  return match;
}

std::uint64_t Mailbox::examined_by(const Msg& m, Time t) {
  std::uint64_t examined = 0;
  search(m, t, &examined);
  return examined;
}

Op* Mailbox::arrive(Msg& m, Time t) {
  std::uint64_t examined = 0;
  Op* match = search(m, t, &examined);
  m.examined += static_cast<std::uint32_t>(examined);
  if (match) {
    if (match->posted > t) match->examined += static_cast<std::uint32_t>(unexpected_count_ + 1);
    cancel(match);
    return match;
  }
  m.next = nullptr;
  m.prev = unexpected_tail_;
  (unexpected_tail_ ? unexpected_tail_->next : unexpected_head_) = &m;
  unexpected_tail_ = &m;
  ++unexpected_count_;
  if (unexpected_indexed_) {
    index_unexpected(&m);
  } else if (unexpected_count_ > kIndexFrom) {
    unexpected_indexed_ = true;
    for (Msg* u = unexpected_head_; u; u = u->next) index_unexpected(u);
  }
  return nullptr;
}

void Mailbox::cancel(Op* op) {
  posted_wild_ -= wild(*op);
  take_out(op, posted_head_, posted_tail_, posted_count_, posted_indexed_, posted_, [this] {
    posted_indexed_ = false;
    posted_index_.clear();
    posted_.clear();
    posted_at_.clear();
    posted_in_order_ = true;
  });
}

const Msg* Mailbox::find(const Op& pattern) const {
  for (const Msg* m = unexpected_head_; m; m = m->next)
    if (matches(pattern, *m)) return m;
  return nullptr;
}

void Mailbox::take_unexpected(Msg* m) {
  auto drop_index = [this] {
    unexpected_indexed_ = unexpected_wild_indexed_ = false;
    unexpected_index_.clear();
    unexpected_.clear();
  };
  take_out(m, unexpected_head_, unexpected_tail_, unexpected_count_, unexpected_indexed_, unexpected_, drop_index);
}

}  // namespace touchstone::detail
