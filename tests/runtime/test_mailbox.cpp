// The Mailbox (runtime/src/mailbox.hpp) on its own, without an engine: its indexed matching must
// take the same entries and count the same examined entries (docs/model.md 2.5) as the linear
// queues it replaced, which this file keeps as the reference.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "../../runtime/src/mailbox.hpp"

namespace touchstone::detail {
namespace {

// The linear queues, as the engine had them: walk from the front, count what is examined.
struct LinearMailbox {
  std::deque<Op*> posted;
  std::deque<Msg*> unexpected;
  Msg* post(Op* op) {
    for (auto it = unexpected.begin(); it != unexpected.end(); ++it)
      if (++op->examined, Mailbox::matches(*op, **it)) {
        Msg* m = *it;
        unexpected.erase(it);
        return m;
      }
    posted.push_back(op);
    return nullptr;
  }
  Op* arrive(Msg& m, Time t) {
    for (auto it = posted.begin(); it != posted.end(); ++it)
      if (m.examined += (*it)->posted <= t, Mailbox::matches(**it, m)) {
        Op* op = *it;
        if (op->posted > t) op->examined += static_cast<std::uint32_t>(unexpected.size() + 1);
        posted.erase(it);
        return op;
      }
    unexpected.push_back(&m);
    return nullptr;
  }
  void cancel(Op* op) { posted.erase(std::find(posted.begin(), posted.end(), op)); }
};

// Random receives (some with wildcards) and arrivals in two contexts, posted in clock order and
// arriving around the posting clock; the queues grow past the length from which they are indexed
// and empty again (the index is dropped), requests are dropped now and then. Both mailboxes see twin objects and must agree on every step.
// Wildcard receives are posted only from step `wild_from` on: until then the index keeps no
// wildcard bucket, and the first wildcard must find what is already queued.
void agree_on_random_traffic(std::uint64_t seed, int steps, int sources, int tags, int wild_from = 0) {
  std::mt19937_64 rng(seed);
  Mailbox indexed;
  LinearMailbox linear;
  std::vector<std::unique_ptr<Op>> ops[2];
  std::vector<std::unique_ptr<Msg>> msgs[2];
  std::vector<std::pair<Op*, Op*>> waiting;  // posted twins not yet matched
  Time clock = 0;
  std::uint64_t matched = 0;
  for (int step = 0; step < steps; ++step) {
    const auto r = rng() % 100;
    if (r < 45) {
      clock += static_cast<Time>(rng() % 3);
      Op proto;
      proto.kind = Op::Kind::recv;
      proto.ctx = 1 + rng() % 2;
      const bool wild_src = rng() % 5 == 0, wild_tag = rng() % 7 == 0;
      proto.src = wild_src && step >= wild_from ? any_source : static_cast<int>(rng() % sources);
      proto.tag = wild_tag && step >= wild_from ? any_tag : static_cast<int>(rng() % tags);
      proto.posted = clock;
      Op* a = ops[0].emplace_back(std::make_unique<Op>(proto)).get();
      Op* b = ops[1].emplace_back(std::make_unique<Op>(proto)).get();
      Msg* ma = indexed.post(a);
      Msg* mb = linear.post(b);
      ASSERT_EQ(ma == nullptr, mb == nullptr) << "step " << step;
      if (ma) ASSERT_EQ(ma->id, mb->id) << "step " << step;
      else waiting.emplace_back(a, b);
      ASSERT_EQ(a->examined, b->examined) << "step " << step;
      matched += ma != nullptr;
    } else if (r < 95) {
      Msg proto;
      proto.id = static_cast<std::uint64_t>(step);
      proto.ctx = 1 + rng() % 2;
      proto.src = static_cast<int>(rng() % sources);
      proto.tag = static_cast<int>(rng() % tags);
      const Time t = clock + static_cast<Time>(rng() % 5) - 2;  // receives may be posted ahead of t
      Msg* a = msgs[0].emplace_back(std::make_unique<Msg>(proto)).get();
      Msg* b = msgs[1].emplace_back(std::make_unique<Msg>(proto)).get();
      Op* oa = indexed.arrive(*a, t);
      Op* ob = linear.arrive(*b, t);
      ASSERT_EQ(oa == nullptr, ob == nullptr) << "step " << step;
      ASSERT_EQ(a->examined, b->examined) << "step " << step;
      if (oa) {
        ASSERT_EQ(oa->posted, ob->posted);
        ASSERT_EQ(oa->examined, ob->examined) << "step " << step;
        std::erase_if(waiting, [&](const auto& w) { return w.first == oa; });
        ++matched;
      }
    } else if (!waiting.empty()) {
      const std::size_t k = rng() % waiting.size();
      indexed.cancel(waiting[k].first);
      linear.cancel(waiting[k].second);
      waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  // The unexpected queues hold the same messages in the same order.
  std::vector<std::uint64_t> left;
  for (const Msg* m = indexed.unexpected(); m; m = m->next) left.push_back(m->id);
  std::vector<std::uint64_t> expected;
  for (const Msg* m : linear.unexpected) expected.push_back(m->id);
  EXPECT_EQ(left, expected);
  EXPECT_GT(matched, static_cast<std::uint64_t>(steps) / 10);  // the traffic did match, often
}

TEST(Mailbox, IndexedMatchingTakesAndCountsAsTheLinearQueuesDo) { agree_on_random_traffic(1, 20000, 8, 4); }

TEST(Mailbox, ManySourcesLongQueues) { agree_on_random_traffic(7, 30000, 64, 2); }

// Long indexed queues without a wildcard, then wildcard receives against them.
TEST(Mailbox, FirstWildcardAfterLongQueuesWithoutOne) {
  agree_on_random_traffic(3, 30000, 64, 2, 15000);
  agree_on_random_traffic(11, 20000, 8, 4, 10000);
}

// The engine's rule is that a VP posts in clock order; the mailbox checks it rather than assume
// it, and counts exactly as the linear walk does when it does not hold (with a queue long enough
// to be indexed).
TEST(Mailbox, PostingOutOfClockOrderStillCountsExactly) {
  constexpr int n = 24;
  Mailbox indexed;
  LinearMailbox linear;
  Op ops[2][n];
  for (int i = 0; i < n; ++i)
    for (auto& side : ops) {
      side[i].ctx = 1;
      side[i].src = 0;
      side[i].tag = i;
      side[i].posted = i == 0 ? 8 : i == 1 ? 5 : 10 * i;  // receive 1 is posted "earlier" than receive 0
    }
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(indexed.post(&ops[0][i]), nullptr);
    ASSERT_EQ(linear.post(&ops[1][i]), nullptr);
  }
  Msg a, b;
  a.ctx = b.ctx = 1;
  a.tag = b.tag = n - 1;
  EXPECT_EQ(indexed.arrive(a, 7), &ops[0][n - 1]);
  EXPECT_EQ(linear.arrive(b, 7), &ops[1][n - 1]);
  EXPECT_EQ(a.examined, 1u);  // of the receives ahead, only receive 1 (at 5) was there by t = 7
  EXPECT_EQ(a.examined, b.examined);
  EXPECT_EQ(ops[0][n - 1].examined, ops[1][n - 1].examined);
}

}  // namespace
}  // namespace touchstone::detail
