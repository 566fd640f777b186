// Wormhole contention (docs/model.md 2.3), with exact times derived from the model:
//  - packet k's header takes path position i at s_k + i*t_hop when the channel is free; a busy
//    channel makes it wait in that channel's FIFO, holding everything it already has;
//  - when it holds the ejection channel (position d+1) at e, the tail arrives at T = e + B_k*b and
//    frees position i at T - (d+1-i)*t_hop; the next packet starts when position 0 frees;
//  - a channel freed at r is free for a header that asks for it at r.
#include <gtest/gtest.h>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

struct Seen {
  Status st;
  Time after = -1;  // the VP's clock right after the operation
};

// ---------------------------------------------------------------- two worms sharing a link

// mesh:1x4, A: 0->2 (links 0-1, 1-2), B: 1->3 (links 1-2, 2-3). B takes link 1-2 first; A's
// header asks for it while B holds it and gets it exactly when B's tail has left it.
TEST(Contention, TwoWormsSharingALinkSerialize) {
  const Machine m = ts_test::prime_machine("mesh:1x4");
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);
  const std::size_t sa = 50, sb = 50;  // single packets
  const Time delta_a = 40;             // A's sender computes a little first
  const Time ha = x.handed(delta_a, sa), hb = x.handed(0, sb);
  // B (d=2): link 1-2 is its position 1, taken at hb + hop, freed at T_B - 2*hop.
  const Time tb = hb + 3 * hop + x.wire_total(sb) * b;
  const Time b_frees_link = tb - 2 * hop;
  // A (d=2): link 1-2 is its position 2, requested at ha + 2*hop.
  const Time a_asks = ha + 2 * hop;
  ASSERT_LT(hb + hop, a_asks) << "B must hold the link when A asks";
  ASSERT_LT(a_asks, b_frees_link) << "A must find the link busy";
  ASSERT_GE(b_frees_link, hb + 3 * hop) << "B's release must not precede B's header reaching ejection";
  const Time a_gets = b_frees_link;
  const Time ta = a_gets + hop + x.wire_total(sa) * b;  // ejection of node 2 one hop later
  const Time a_send_returns = ta - 3 * hop;
  ASSERT_GT(ta, x.arrival_cf(ha, 2, sa));  // really delayed

  Seen ra, rb;
  Time a_send = -1, b_send = -1;
  const auto out = ts_test::bytes(64);
  std::vector<std::byte> in(64);
  const RunResult r = run(m, [&](Proc& p) {
    switch (p.rank()) {
      case 0: p.compute(delta_a); p.send(2, 0, std::span(out).first(sa)); a_send = p.now(); break;
      case 1: p.send(3, 0, std::span(out).first(sb)); b_send = p.now(); break;
      case 2: ra.st = p.recv(0, 0, in); ra.after = p.now(); break;
      case 3: rb.st = p.recv(1, 0, in); rb.after = p.now(); break;
    }
  });
  EXPECT_EQ(rb.st.arrival, x.arrival_cf(hb, 2, sb));  // B itself is contention-free
  EXPECT_EQ(b_send, x.send_return_cf(hb, 2, sb));
  EXPECT_EQ(ra.st.arrival, ta);
  EXPECT_EQ(ra.after, x.recv_done(0, ta, sa));
  EXPECT_EQ(a_send, a_send_returns);
  EXPECT_EQ(r.stats.blocked_headers, 1u);
  EXPECT_EQ(r.stats.blocked_time, a_gets - a_asks);
}

// Same geometry, but B has two packets: A's header, queued first in the link's FIFO, takes the
// link between B's packets; B's second packet waits behind A (FIFO, equal-time rule).
TEST(Contention, WaitingWormTakesSharedLinkBetweenPacketsOfAnotherMessage) {
  const Machine m = ts_test::prime_machine("mesh:1x4");
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);
  const std::size_t sa = 50, sb = 64 + 50;  // B: packets of 64 and 50 payload bytes
  const Time hb = x.handed(0, sb);
  // B0: position 1 (link 1-2) at hb + hop; tail T_B0; frees the link at T_B0 - 2*hop and the
  // injection channel at T_B0 - 3*hop, where B1 starts.
  const Time tb0 = hb + 3 * hop + x.wire(sb, 0) * b;
  const Time sb1 = tb0 - 3 * hop;
  // A's sender starts so that A's header reaches the link while B0 holds it.
  const Time ha_target = hb + hop;  // A asks at ha + 2*hop = hb + 3*hop
  const Time delta_a = ha_target - x.send_cost(sa);
  ASSERT_GT(delta_a, 0);
  const Time ha = x.handed(delta_a, sa);
  const Time a_asks = ha + 2 * hop;
  ASSERT_LT(hb + hop, a_asks);
  ASSERT_LT(a_asks, tb0 - 2 * hop);
  // B1 asks for the link at sb1 + hop == tb0 - 2*hop, the very time B0 frees it: A is ahead in
  // the FIFO, so A gets it and B1 waits.
  ASSERT_EQ(sb1 + hop, tb0 - 2 * hop);
  const Time a_gets = tb0 - 2 * hop;
  const Time ta = a_gets + hop + x.wire_total(sa) * b;
  const Time a_frees_link = ta - hop;  // A's position 2 of d = 2
  const Time b1_gets = a_frees_link;
  const Time tb1 = b1_gets + 2 * hop + x.wire(sb, 1) * b;  // then link 2-3 and ejection of node 3
  ASSERT_GE(tb1 - 2 * hop, tb0 - hop);  // link 2-3 (B0 frees it at tb0 - hop) is free for B1

  Seen ra, rb;
  Time a_send = -1, b_send = -1;
  const auto out = ts_test::bytes(sb);
  std::vector<std::byte> in(sb);
  run(m, [&](Proc& p) {
    switch (p.rank()) {
      case 0: p.compute(delta_a); p.send(2, 0, std::span(out).first(sa)); a_send = p.now(); break;
      case 1: p.send(3, 0, out); b_send = p.now(); break;
      case 2: ra.st = p.recv(0, 0, in); ra.after = p.now(); break;
      case 3: rb.st = p.recv(1, 0, in); rb.after = p.now(); break;
    }
  });
  EXPECT_EQ(ra.st.arrival, ta);
  EXPECT_EQ(a_send, ta - 3 * hop);
  EXPECT_EQ(rb.st.arrival, tb1);
  EXPECT_EQ(b_send, tb1 - 3 * hop);
  EXPECT_EQ(rb.after, x.recv_done(0, tb1, sb));
}

// mesh:3x2 (rows of 2): A 0->3 goes (0,0)->(0,1)->(1,1) under X-first routing, B 1->5 goes
// (0,1)->(1,1)->(2,1). They share link (0,1)->(1,1) only if the route moves along the row first;
// Y-first, A would take (0,0)->(1,0)->(1,1) and never meet B.
TEST(Contention, XFirstRoutingMakesTurningWormShareTheColumnLink) {
  const Machine m = ts_test::prime_machine("mesh:3x2");
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);
  const std::size_t sa = 60, sb = 60;
  const Time hb = x.handed(0, sb);
  const Time delta_a = 2 * hop;  // A's header reaches the shared link after B's
  const Time ha = x.handed(delta_a, sa);
  const Time tb = hb + 3 * hop + x.wire_total(sb) * b;
  const Time a_asks = ha + 2 * hop;  // position 2 of A
  ASSERT_LT(hb + hop, a_asks);
  ASSERT_LT(a_asks, tb - 2 * hop);  // B frees its position 1 at T_B - 2*hop
  const Time ta = (tb - 2 * hop) + hop + x.wire_total(sa) * b;

  Status sa_st, sb_st;
  const auto out = ts_test::bytes(64);
  std::vector<std::byte> in(64);
  run(m, [&](Proc& p) {
    switch (p.rank()) {
      case 0: p.compute(delta_a); p.send(3, 0, std::span(out).first(sa)); break;
      case 1: p.send(5, 0, std::span(out).first(sb)); break;
      case 3: sa_st = p.recv(0, 0, in); break;
      case 5: sb_st = p.recv(1, 0, in); break;
      default: break;
    }
  });
  EXPECT_EQ(sb_st.arrival, tb);
  EXPECT_EQ(sa_st.arrival, ta);
}

// ---------------------------------------------------------------- wormhole blocking

// mesh:1x6. X: 2->4 holds link 2-3 for a long time. A: 0->3 (links 0-1, 1-2, 2-3) blocks at
// link 2-3 and, being a worm, keeps holding links 0-1 and 1-2. C: 1->2 only needs link 1-2 -- its
// own path is otherwise free, and without X it would not meet A at all -- but it waits for A.
struct BlockingScenario {
  Time arrival_c = -1, send_c = -1, recv_c = -1, arrival_a = -1;
};

BlockingScenario run_blocking(const Machine& m, bool with_x, std::size_t sx, std::size_t sa, std::size_t sc,
                              Time delta_a, Time delta_c) {
  BlockingScenario s;
  const auto out = ts_test::bytes(sx);
  std::vector<std::byte> in(sx);
  run(m, [&](Proc& p) {
    switch (p.rank()) {
      case 2:
        if (with_x) p.send(4, 0, out);
        break;
      case 4:
        if (with_x) p.recv(2, 0, in);
        break;
      case 0: p.compute(delta_a); p.send(3, 0, std::span(out).first(sa)); break;
      case 3: s.arrival_a = p.recv(0, 0, in).arrival; break;
      case 1: p.compute(delta_c); p.send(2, 0, std::span(out).first(sc)); s.send_c = p.now(); break;
      default: break;
    }
    if (p.rank() == 2) {
      s.arrival_c = p.recv(1, 0, in).arrival;
      s.recv_c = p.now();
    }
  });
  return s;
}

TEST(Contention, WormBlockedAtBusyLinkHoldsUpstreamLinks) {
  Machine m = ts_test::prime_machine("mesh:1x6");
  m.net.packet_payload = 1000;  // X is one long packet
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);
  const std::size_t sx = 1000, sa = 20, sc = 5;

  // X (d=2) from time 0: link 2-3 is its position 1, held from hx + hop to T_X - 2*hop.
  const Time hx = x.handed(0, sx);
  const Time tx = hx + 3 * hop + x.wire_total(sx) * b;
  const Time x_frees_23 = tx - 2 * hop;
  // A (d=3): asks for link 2-3 (position 3) at ha + 3*hop, in the middle of X's tenure.
  const Time a_asks = (hx + hop + x_frees_23) / 2;
  const Time delta_a = a_asks - 3 * hop - x.send_cost(sa);
  ASSERT_GT(delta_a, 0);
  const Time ha = x.handed(delta_a, sa);
  ASSERT_EQ(ha + 3 * hop, a_asks);
  ASSERT_GT(a_asks, hx + hop);
  ASSERT_LT(a_asks, x_frees_23);
  const Time a_gets_23 = x_frees_23;
  const Time ta = a_gets_23 + hop + x.wire_total(sa) * b;  // then the ejection channel of node 3
  const Time a_frees_12 = ta - 2 * hop;                    // position 2 of d = 3
  // Without X, A is contention-free and frees link 1-2 at its own T - 2*hop.
  const Time ta_alone = x.arrival_cf(ha, 3, sa);
  const Time a_alone_frees_12 = ta_alone - 2 * hop;
  // C (d=1): asks for link 1-2 (its position 1) at hc + hop, after A's tail would have passed it
  // had A not been blocked, but while the blocked A still holds it.
  const Time c_asks = a_alone_frees_12 + 1000;
  const Time delta_c = c_asks - hop - x.send_cost(sc);
  ASSERT_GT(delta_c, 0);
  const Time hc = x.handed(delta_c, sc);
  ASSERT_GT(c_asks, ha + 2 * hop) << "A already holds link 1-2";
  ASSERT_LT(c_asks, a_frees_12) << "the blocked A still holds link 1-2";
  const Time tc = a_frees_12 + hop + x.wire_total(sc) * b;  // C's ejection (node 2) one hop later
  ASSERT_GT(tc, x.arrival_cf(hc, 1, sc));

  const BlockingScenario with = run_blocking(m, true, sx, sa, sc, delta_a, delta_c);
  EXPECT_EQ(with.arrival_a, ta);
  EXPECT_EQ(with.arrival_c, tc);
  EXPECT_EQ(with.send_c, tc - 2 * hop);
  EXPECT_EQ(with.recv_c, x.recv_done(0, tc, sc));

  // Control: without X nobody blocks, and C is contention-free.
  const BlockingScenario without = run_blocking(m, false, sx, sa, sc, delta_a, delta_c);
  EXPECT_EQ(without.arrival_a, ta_alone);
  EXPECT_EQ(without.arrival_c, x.arrival_cf(hc, 1, sc));
  EXPECT_EQ(without.send_c, x.send_return_cf(hc, 1, sc));
}

// ---------------------------------------------------------------- ports

// One-port injection: node 0 sends M1 to node 1 then M2 to node 2 (different links, different
// destinations); M2 cannot start before M1's last packet has left the injection channel.
struct PortResult {
  Status s1, s2;
  Time sender_after = -1;
};

PortResult run_injection(const Machine& m, std::size_t s1, std::size_t s2) {
  PortResult res;
  const auto out = ts_test::bytes(s1 + s2);
  std::vector<std::byte> in1(s1), in2(s2);
  run(m, [&](Proc& p) {
    if (p.rank() == 0) {
      Request rq[2] = {p.isend(1, 0, std::span(out).first(s1)), p.isend(2, 0, std::span(out).first(s2))};
      p.waitall(rq);
      res.sender_after = p.now();
    } else if (p.rank() == 1) {
      res.s1 = p.recv(0, 0, in1);
    } else if (p.rank() == 2) {
      res.s2 = p.recv(0, 0, in2);
    }
  });
  return res;
}

TEST(Ports, OnePortInjectionSerializesMessagesToDifferentDestinations) {
  Machine m = ts_test::prime_machine("mesh:2x2");
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);
  const std::size_t s1 = 256, s2 = 50;  // M1: 4 packets
  const Time h1 = x.handed(0, s1), h2 = x.handed(h1, s2);
  const Time m1_leaves = x.send_return_cf(h1, 1, s1);
  ASSERT_GT(m1_leaves, h2) << "M2 is handed over while M1 still occupies the injection channel";
  const Time start2 = std::max(h2, m1_leaves);
  const PortResult one = run_injection(m, s1, s2);
  EXPECT_EQ(one.s1.arrival, x.arrival_cf(h1, 1, s1));
  EXPECT_EQ(one.s2.arrival, start2 + 2 * hop + x.wire_total(s2) * b);
  EXPECT_EQ(one.sender_after, start2 + x.wire_total(s2) * b);

  // ports=2: the second injection channel takes M2 at once.
  Machine m2 = m;
  m2.net.inj_ports = m2.net.ej_ports = 2;
  const PortResult two = run_injection(m2, s1, s2);
  EXPECT_EQ(two.s1.arrival, x.arrival_cf(h1, 1, s1));
  EXPECT_EQ(two.s2.arrival, x.arrival_cf(h2, 1, s2));
  EXPECT_EQ(two.sender_after, std::max(m1_leaves, x.send_return_cf(h2, 1, s2)));
}

TEST(Ports, PortsOptionOfTheMachineSpecGivesKChannels) {
  const Machine m = parse_machine("mesh:2x2,ports=2");
  EXPECT_EQ(m.net.inj_ports, 2);
  EXPECT_EQ(m.net.ej_ports, 2);
  const Machine all = parse_machine("mesh:4x4,ports=all");
  EXPECT_EQ(all.net.inj_ports, 4);  // one per link direction of a 2-D mesh
  EXPECT_EQ(all.net.ej_ports, 4);
}

// One-port ejection: P (1->0) and Q (2->0), one link each; Q's header reaches node 0's single
// ejection channel while P's body streams through it, and waits there until P's tail is in.
PortResult run_ejection(const Machine& m, std::size_t sp, std::size_t sq, Time delta_q) {
  PortResult res;
  const auto out = ts_test::bytes(sp + sq);
  std::vector<std::byte> in1(sp), in2(sq);
  run(m, [&](Proc& p) {
    if (p.rank() == 1) p.send(0, 0, std::span(out).first(sp));
    if (p.rank() == 2) {
      p.compute(delta_q);
      p.send(0, 0, std::span(out).first(sq));
      res.sender_after = p.now();
    }
    if (p.rank() == 0) {
      Request rq[2] = {p.irecv(1, 0, in1), p.irecv(2, 0, in2)};
      auto st = p.waitall(rq);
      res.s1 = st[0];
      res.s2 = st[1];
    }
  });
  return res;
}

TEST(Ports, OnePortEjectionSerializesMessagesFromDifferentSources) {
  Machine m = ts_test::prime_machine("mesh:2x2");
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);
  const std::size_t sp = 60, sq = 40;
  const Time hp = x.handed(0, sp);
  const Time tp = x.arrival_cf(hp, 1, sp);  // P reaches ejection at hp + 2*hop, tail at tp
  // Q reaches the ejection channel half-way through P's body.
  const Time q_asks = hp + 2 * hop + x.wire_total(sp) * b / 2;
  const Time delta_q = q_asks - 2 * hop - x.send_cost(sq);
  ASSERT_GT(delta_q, 0);
  const Time hq = x.handed(delta_q, sq);
  ASSERT_GT(hq + 2 * hop, hp + 2 * hop);
  ASSERT_LT(hq + 2 * hop, tp);
  const Time tq = tp + x.wire_total(sq) * b;  // gets the channel when P's tail is in (equal time)

  const PortResult one = run_ejection(m, sp, sq, delta_q);
  EXPECT_EQ(one.s1.arrival, tp);
  EXPECT_EQ(one.s2.arrival, tq);
  EXPECT_EQ(one.sender_after, tq - 2 * hop);  // Q's position 0 frees at T - (d+1)*hop

  Machine m2 = m;
  m2.net.inj_ports = m2.net.ej_ports = 2;
  const PortResult two = run_ejection(m2, sp, sq, delta_q);
  EXPECT_EQ(two.s1.arrival, tp);
  EXPECT_EQ(two.s2.arrival, x.arrival_cf(hq, 1, sq));
  EXPECT_EQ(two.sender_after, x.send_return_cf(hq, 1, sq));
}

// ---------------------------------------------------------------- short worms (engine bug)

// A worm shorter than its path: B (1->3 on mesh:1x4, d=2) carries only B*b < t_hop of bytes, so
// its tail leaves link 1-2 at T_B - 2*t_hop = hb + t_hop + B*b, before A (0->2) even asks for that
// link at ha + 2*t_hop (same start). By the model the link is free when A asks: A is
// contention-free. (No message may ever arrive before its contention-free time, and a channel must
// never be granted before it was requested.)
TEST(ShortWorms, ShortWormFreesLinksBehindItAndNeverDelaysAFollowerThatComesLater) {
  Machine m = ts_test::prime_machine("mesh:1x4");
  m.net.hop_time = 1000;  // much longer than any body below
  m.net.packet_header = 0;
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);
  const std::size_t s = 10;
  ASSERT_LT(x.wire_total(s) * b, hop);
  const Time h = x.handed(0, s);
  const Time b_frees_12 = x.arrival_cf(h, 2, s) - 2 * hop;
  ASSERT_LE(b_frees_12, h + 2 * hop) << "the link is free again when A asks";
  Status sa, sb;
  RunResult r;
  const auto out = ts_test::bytes(s);
  std::vector<std::byte> in(s);
  r = run(m, [&](Proc& p) {
    switch (p.rank()) {
      case 1: p.send(3, 0, out); break;
      case 0: p.send(2, 0, out); break;
      case 2: sa = p.recv(0, 0, in); break;
      case 3: sb = p.recv(1, 0, in); break;
    }
  });
  EXPECT_EQ(sb.arrival, x.arrival_cf(h, 2, s));
  EXPECT_EQ(sa.arrival, x.arrival_cf(h, 2, s));
  EXPECT_EQ(r.stats.blocked_headers, 0u);
  EXPECT_EQ(r.stats.blocked_time, 0);
}

}  // namespace
