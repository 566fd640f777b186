#include "mailbox.hpp"

namespace touchstone::detail {

Msg* Mailbox::post(Op* op) {
  Msg* prev = nullptr;
  for (Msg* m = unexpected_head_; m; prev = m, m = m->next)
    if (++op->examined, matches(*op, *m)) {
      take_unexpected(prev, m);
      return m;
    }
  op->prev = posted_tail_;
  (posted_tail_ ? posted_tail_->next : posted_head_) = op;
  posted_tail_ = op;
  return nullptr;
}

Op* Mailbox::arrive(Msg& m, Time t) {
  for (Op* op = posted_head_; op; op = op->next)
    if (m.examined += op->posted <= t, matches(*op, m)) {
      if (op->posted > t)
        for (const Msg* ahead = unexpected_head_;; ahead = ahead->next) {
          ++op->examined;
          if (!ahead) break;
        }
      cancel(op);
      return op;
    }
  m.next = nullptr;
  (unexpected_tail_ ? unexpected_tail_->next : unexpected_head_) = &m;
  unexpected_tail_ = &m;
  return nullptr;
}

void Mailbox::cancel(Op* op) {
  (op->prev ? op->prev->next : posted_head_) = op->next;
  (op->next ? op->next->prev : posted_tail_) = op->prev;
  op->next = op->prev = nullptr;
}

const Msg* Mailbox::find(const Op& pattern) const {
  for (const Msg* m = unexpected_head_; m; m = m->next)
    if (matches(pattern, *m)) return m;
  return nullptr;
}

void Mailbox::take_unexpected(Msg* prev, Msg* m) {
  (prev ? prev->next : unexpected_head_) = m->next;
  if (unexpected_tail_ == m) unexpected_tail_ = prev;
  m->next = nullptr;
}

}  // namespace touchstone::detail
