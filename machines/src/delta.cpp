#include <fmt/format.h>

#include "family.hpp"
#include "text.hpp"
#include "touchstone/error.hpp"
#include "touchstone/topologies/grid.hpp"

namespace touchstone::machines {

// The Intel Touchstone Delta of paper 000 (section 2): 512 nodes as a 16 x 32 wormhole mesh with
// XY routing, packets of 512 bytes (482 data + 30 header), one message in and one out at a time.
// The cost parameters are fitted to the paper's Figure 9 (docs/machines.md, "Fitting the Delta";
// `paper000 fit` in bench/paper000.cpp reproduces the fit). The Delta sends faster than it receives (paper 000,
// section 4), so recv_per_byte > send_per_byte.
Machine delta_machine(const std::string& arg, SpecOptions&, const std::string& spec) {
  std::vector<int> dims = arg.empty() ? std::vector<int>{16, 32} : parse_dims(arg, spec);
  if (dims.size() != 2 || dims[0] > 16 || dims[1] > 32)
    throw UsageError(fmt::format("delta:RxC is a sub-mesh of the 16x32 Delta: R <= 16 and C <= 32"));
  Machine m = generic_machine(make_mesh(std::move(dims)));
  m.name = "delta:" + std::to_string(m.topology->dims()[0]) + "x" + std::to_string(m.topology->dims()[1]);
  // Fitted by `paper000 fit --sizes 16 256 4096` (docs/machines.md), with the k-level algorithms
  // synchronizing between supersteps, matching paid per queue entry and local copies (combining and
  // extracting blocks) charged: rms factor 1.087 over those cells.
  // Figure 9 pins only C_send + C_recv = 233.64 us (an all-to-all pays both per message). The split,
  // the interface set-up X and the send's tail T (both parts of C_send) are chosen together by a
  // joint scan of the whole claims table (docs/paper000.md, "The split, the interface set-up and
  // the tail, scanned together"): the winner claims of Figures 2, 6 and 9 first (a
  // wrong winner is the worst thing a benchmark can print), then the count, then Figure 9's loss.
  // Every point with C_send 130..150 us, X 110..125 us and T = C_send - X keeps every winner claim and
  // reproduces 107..109 of 159 claims; the data cannot tell those points apart. The preset is
  // inside: C_send 145 us (section 4.1's "set-up time of receiving a message is less than the
  // set-up time of sending": 145 > 88.64), X 120 us, T 25 us. C_send = 200 us, the fits'
  // starting value, misses Figure 2's 16-byte winner.
  m.costs.send_overhead = nanoseconds(145'000);
  m.costs.send_per_byte = picoseconds(13'630);
  m.costs.recv_overhead = nanoseconds(88'640);  // 233.64 - C_send
  m.costs.recv_per_byte = picoseconds(84'090);
  m.costs.match_per_entry = picoseconds(594'700);
  m.costs.copy_per_byte = picoseconds(8'106);
  m.costs.copy_per_piece = picoseconds(2'828'000);
  m.costs.probe_cost = microseconds(5);
  // The part of the send set-up that writes the message into the network interface, which holds
  // one outgoing message (docs/model.md 2.17): a message starts no earlier than X = 120 us after the
  // previous one left. Paper 000, section 3.2: 1-lev-dir "experiences a total of p - 1 message
  // set-up costs" and is "a reasonable choice only for large message sizes"; for large L
  // logp-lev-rec(0.75) "is the best choice". Without the rule 1-lev-dir's set-ups hide under the
  // previous injection and it runs at the source's injection bound, ahead of logp-lev-rec(0.75)
  // from 4 KB up. Not fitted to a table: that statement needs X above about 110 us (105 loses it);
  // the joint scan above leaves 110..125 us.
  m.costs.ni_setup = microseconds(120);
  // The send's tail (docs/model.md 2.19): the rest of C_send after the interface set-up, T = C_send
  // - X = 25 us, is the send's bookkeeping after the interface has the message and overlaps its
  // transfer. Paper 000 uses non-blocking sends throughout and finds blocking sends slower
  // (sections 3.2, 4.1, 5.2). Not fitted to a table: the joint scan above found the claims best
  // where X + T = C_send (the whole set-up is the interface's part, then the bookkeeping), e.g. at
  // C_send 145, X 120: T = 0 / 12.5 / 25 us reproduce 107 / 107 / 108 claims (`paper000 calibrate`).
  m.costs.send_tail = microseconds(25);
  // Packets are demultiplexed one at a time (docs/model.md 2.18): a packet that does not continue
  // the message of the node's previous packet is matched again, its search paid at match_per_entry
  // and a fixed demux_switch. Paper 000, section 4.1: "a processor issuing multiple receives
  // experiences an additional overhead when dealing with the arbitrary arrival of messages and
  // determining which posted receive corresponds to an arriving message". The paper gives no size:
  // 33.64 us, chosen as the C_recv of the earlier preset with C_send = 200 us (a resumed packet sets
  // its receive up again) and kept when the joint scan moved C_send and C_recv. Section 4.1's winner
  // (logp-lev-rec(0.60) above 512 bytes) needs more than 20 us, its "2-lev-rec is a good choice"
  // (within 1.25x) at most about 34; 25 and 33.64 give the same claims count, 45 one less
  // (docs/paper000.md, "Figure 6: demultiplexing per packet"). With the search alone Figure 6 keeps
  // 1-lev-dir first from 2 KB up. One message at a time never switches: no contention-free latency
  // changes, nor Figure 2, and Figure 9's winners stay.
  m.costs.demux_per_packet = true;
  m.costs.demux_switch = nanoseconds(33'640);
  set_channels(m.net, nanoseconds(100), picoseconds(91'700), 482, 30);
  // Router buffers (docs/model.md 2.9): each switch input holds 128 bytes, so a blocked worm that
  // short drains into it and frees the channels behind it; a longer one blocks as in wormhole.
  // Section 4.1 speaks of "the buffering capacity of the network" (one-to-all algorithms use it,
  // all-to-one ones cannot) without sizing it, and section 2's "wormhole routing" rules out a
  // whole packet's worth: with 512 bytes Figure 9's winners from 1 to 8 KB are lost. Not fitted to
  // a table: `paper000 calibrate --groups router_buffer` (on the C_send = 200 us preset) reproduces 101 / 105 / 106 /
  // 106 / 104 / 104 / 104 / 95 claims at 0 / 60 / 96 / 128 / 160 / 224 / 320 / 512 bytes. Every
  // buffer from 60 bytes (the second packet of a 512-byte message, 30 data + 30 header) to 320
  // gives Figure 9's 512-byte winner (1-lev-balance, as on the Delta), which pure wormhole misses
  // (2-lev-c,r, 1.13x): that packet no longer holds a path while it waits (docs/paper000.md).
  m.net.switching = Switching::cut_through;
  m.net.router_buffer = 128;
  return m;
}

// The ends of what paper 000's evidence leaves open around the preset: `paper000 calibrate`
// (on this preset) scores the whole claims table (159 claims) at each point; these are
// the points within one claim of the best of their scan (108) that Figure 9's loss (within 10% of
// the scan's smallest) does not rule out either (docs/machines.md, "delta (paper 000)"). The
// C_send/C_recv split moves along Figure 9's sum, 233.64 us, with the interface set-up held and the
// send's tail taking the rest of C_send (the ridge X + T = C_send); the interface set-up moves with
// the tail likewise. recv_us alone, recv_ns_per_byte, the link time and match_ns lose two claims
// or more at both ends of their scans: pinned there, not listed.
const OpenVariants& delta_open() {
  static const OpenVariants v = {
      {"send_us=130,recv_us=103.64,send_tail_us=10",
       "C_send/C_recv split at the low end of 130..189 us (Figure 9 pins the sum; "
       "the tail takes what the interface set-up leaves)"},
      {"send_us=189.32,recv_us=44.32,send_tail_us=69.32",
       "C_send/C_recv split at the high end of 130..189 us (C_recv halved; "
       "the tail takes what the interface set-up leaves)"},
      {"ni_setup_us=110,send_tail_us=35",
       "network-interface set-up at the low end of 110..135 us (the tail takes the rest of C_send)"},
      {"ni_setup_us=135,send_tail_us=10",
       "network-interface set-up at the high end of 110..135 us (the tail takes the rest of C_send)"},
      {"send_tail_us=0", "send's tail at the low end of 0..25 us"},
      {"router_buffer=96", "router buffer at the low end of 96..320 bytes"},
      {"router_buffer=320", "router buffer at the high end of 96..320 bytes"},
      {"send_ns_per_byte=9.677", "send time per byte at the low end of 9.7..13.6 ns"},
      {"copy_ns_per_byte=5.755", "local copy time per byte at the low end of 5.8..8.1 ns"},
      {"copy_ns_per_piece=3987", "local copy time per piece at the high end of 2.8..4.0 us"},
      {"hop_ns=50", "router latency at the low end of 50..400 ns (our choice; the paper gives none)"},
      {"hop_ns=400", "router latency at the high end of 50..400 ns"},
  };
  return v;
}

// How far the preset's rankings can be trusted: `paper000 fig9` sets our Figure 9 beside the
// Delta's (bench/reference/delta_fig9_alltoall_256.csv) and counts, among the pairs of algorithms
// at one message size, those the Delta ran in the other order (docs/paper000.md, "How far a lead
// can be trusted"). These are the counts of that table for this preset, at a lead of 10%, where
// the share falls from about a third to one in sixteen. `paper000 fig9` on the preset checks them
// and says so when a refit has changed them. They are counted on the data the preset was fitted
// to, so on other data the shares can only be worse.
const RankingEvidence& delta_evidence() {
  static const RankingEvidence e{.decisive_lead = 0.10,
                                 .close_pairs = 78,
                                 .close_reordered = 29,
                                 .far_pairs = 216,
                                 .far_reordered = 12,
                                 .measured_on = "the Delta's measured Figure 9 (all-to-all, 256 processors, 16 B to 16 KB)",
                                 .counted_by = "paper000 fig9"};
  return e;
}

}  // namespace touchstone::machines
