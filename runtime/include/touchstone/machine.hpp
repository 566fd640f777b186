// A machine: a topology plus the cost parameters of its nodes and network (docs/model.md 2, docs/machines.md).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "touchstone/time.hpp"
#include "touchstone/topology.hpp"

namespace touchstone {

enum class BarrierKind { hardware, software };

/// How a switch treats a blocked worm (docs/model.md 2.9).
enum class Switching {
  wormhole,     ///< the blocked worm holds every channel it occupies
  cut_through,  ///< a blocked worm that fits in router_buffer drains into it, freeing the channels behind
};

/// Which of the headers waiting for a channel gets it when it frees (docs/model.md 2.13).
enum class Arbitration {
  fifo,         ///< the header that has waited longest
  random,       ///< a seeded random one (RunOptions::seed)
  round_robin,  ///< the next input channel after the one granted last, in channel order
};

/// The class of a reduction operator's operands, which sets its cost per byte (NodeCosts::reduce_per_byte).
enum class OperandClass {
  integer,   ///< integer, logical and bitwise operators (and MPI_BYTE, MPI_MINLOC/MAXLOC on integer pairs)
  floating,  ///< floating-point and complex operands
};

/// Cost of the node's CPU for sending and receiving (docs/model.md 2.1).
struct NodeCosts {
  Time send_overhead = 0;   ///< C_send, charged to the sender's clock per message
  Time send_per_byte = 0;   ///< send_byte_time, per payload byte
  Time recv_overhead = 0;   ///< C_recv, charged to the receiver's clock per message
  Time recv_per_byte = 0;   ///< recv_byte_time, per payload byte
  /// Per packet of the message (docs/model.md 2.14), for CPUs that move every packet themselves
  /// (the CM-5 writes and reads each packet through its network interface's FIFOs). 0 by default.
  Time send_per_packet = 0;
  Time recv_per_packet = 0;
  /// The receive drains the body while it arrives (docs/model.md 2.15): the per-packet and per-byte
  /// receive work of each packet starts when that packet has arrived and the CPU is free, instead of
  /// after the whole message. Off by default.
  bool recv_overlap = false;
  /// The send hands each packet to the network as soon as the CPU has done its per-packet and
  /// per-byte work for it, instead of after the whole message (docs/model.md 2.15). Off by default.
  bool send_overlap = false;
  /// Demultiplexing per packet (docs/model.md 2.18): a packet that does not continue the message of
  /// the previous packet its node took is matched again, paying match_per_entry for every receive
  /// queue entry that search examines (model.md 2.5). Off by default: a message is matched once.
  bool demux_per_packet = false;
  /// With demux_per_packet: a fixed CPU time per packet matched again, on top of its search
  /// (docs/model.md 2.18; an interrupt's switch to another message's state). 0 by default.
  Time demux_switch = 0;
  /// The part of a message's send set-up that needs the network interface (docs/model.md 2.17).
  /// An interface holds one outgoing message per injection port: a message may start on a port no
  /// earlier than ni_setup after the port's previous message has left, so this part of the set-up
  /// cannot overlap the previous message's injection. A message handed to an idle port is not
  /// delayed (its set-up was paid inside C_send). 0 by default (no such constraint).
  Time ni_setup = 0;
  /// The send's tail (docs/model.md 2.19): the last part of C_send, done by the sender's CPU after
  /// it has handed the message to the network (completing the send's bookkeeping), so the message
  /// leaves send_tail before the send's CPU work ends and its transfer overlaps that work. The
  /// sender's clock is charged the whole send cost as without it. At most send_overhead; 0 by
  /// default (the whole send work comes before the hand-over, 2.2).
  Time send_tail = 0;
  Time probe_cost = 0;      ///< one probe/iprobe/test call that finds nothing
  Time match_per_entry = 0; ///< matching: per queue entry examined (posted receives, unexpected messages)
  Time copy_per_byte = 0;   ///< local memory copy (combining, extracting blocks), per byte (Proc::local_copy)
  Time copy_per_piece = 0;  ///< local memory copy, per contiguous piece copied (one memcpy's set-up)
  /// gamma: the time a reduction operator takes per byte of operand it combines (docs/model.md
  /// 2.12), per operand class; charged by every collective algorithm that combines data. 0 by default.
  Time reduce_int_per_byte = 0;
  Time reduce_float_per_byte = 0;
  Time reduce_per_byte(OperandClass c) const {
    return c == OperandClass::floating ? reduce_float_per_byte : reduce_int_per_byte;
  }
};

/// Network parameters (docs/model.md 2.3). Times in picoseconds; "byte times" in picoseconds per byte.
struct NetworkParams {
  Time hop_time = 0;          ///< t_hop: the header's routing + switching + wire time per channel
  Time link_byte_time = 1;    ///< per byte on a network link
  Time inject_byte_time = 1;  ///< per byte on the node's injection channel
  Time eject_byte_time = 1;   ///< per byte on the node's ejection channel
  int packet_payload = 1024;  ///< data bytes per packet
  int packet_header = 0;      ///< header bytes per packet (travel, but are not payload)
  int inj_ports = 1;          ///< injection channels per node (1 = one-port)
  int ej_ports = 1;           ///< ejection channels per node
  std::int64_t recv_buffer = -1;  ///< bytes of receive buffering per node, -1 = unlimited
  /// Receive-side flow control (docs/model.md 2.16). kNoFlowControl (default): every message is
  /// sent at once (eager) and a bounded recv_buffer is reserved at the ejection channel (2.7).
  /// Otherwise a message of more than eager_limit bytes, or one that does not fit the receiver's
  /// free recv_buffer when it is sent, goes by rendezvous (request to send, clear to send, data).
  std::int64_t eager_limit = kNoFlowControl;
  static constexpr std::int64_t kNoFlowControl = -1;
  bool flow_control() const { return eager_limit != kNoFlowControl; }
  Switching switching = Switching::wormhole;
  std::int64_t router_buffer = 0;  ///< cut-through: bytes of buffer at each switch input port
  Arbitration arbitration = Arbitration::fifo;  ///< at every link and ejection channel
  BarrierKind barrier = BarrierKind::software;
  Time barrier_latency = 0;   ///< hardware barrier: last arrival to release
  /// Replicating routers (docs/model.md 2.11; HPAM's `,multicast`): Proc::multicast may fork a worm
  /// onto all of a router's Topology::replicating_channels.
  bool multicast = false;
  /// A send completes only when the receive of its message has completed (docs/model.md 2.21): a
  /// network interface without buffering, whose sender waits while the receiving CPU takes the
  /// message (paper 001's uni-port processors, eqs. 4-14). Active messages are not held. Off by default.
  bool send_holds_until_received = false;

  /// Packets of a message of `bytes` payload bytes: max(1, ceil(bytes / packet_payload)).
  std::size_t packets(std::size_t bytes) const {
    const auto p = static_cast<std::size_t>(packet_payload);
    return bytes == 0 ? 1 : (bytes + p - 1) / p;
  }
};

/// A complete machine description. The machine catalog builds them from spec strings
/// (parse_machine in touchstone/machines.hpp); a program may also fill one in itself.
struct Machine {
  std::string name;
  std::shared_ptr<const Topology> topology;
  NodeCosts costs;                    ///< the same on every node unless node_costs is set
  std::vector<NodeCosts> node_costs;  ///< optional per-node override (size == nodes)
  NetworkParams net;

  int nodes() const { return topology->nodes(); }
  const NodeCosts& costs_of(int node) const {
    return node_costs.empty() ? costs : node_costs[static_cast<std::size_t>(node)];
  }
  /// CPU time of `node` to send a message of `bytes`: C_send + L*s + n*s_p (docs/model.md 2.2, 2.14).
  Time send_cost(int node, std::size_t bytes) const {
    const NodeCosts& c = costs_of(node);
    return c.send_overhead + static_cast<Time>(bytes) * c.send_per_byte +
           static_cast<Time>(net.packets(bytes)) * c.send_per_packet;
  }
  /// The part of send_cost that grows with the message: L*s + n*s_p (what send_overlap overlaps).
  Time send_body_cost(int node, std::size_t bytes) const {
    const NodeCosts& c = costs_of(node);
    return static_cast<Time>(bytes) * c.send_per_byte + static_cast<Time>(net.packets(bytes)) * c.send_per_packet;
  }
  /// CPU time of `node` to receive a message of `bytes`: C_recv + L*r + n*r_p (docs/model.md 2.5, 2.14).
  Time recv_cost(int node, std::size_t bytes) const { return costs_of(node).recv_overhead + recv_body_cost(node, bytes); }
  /// The part of recv_cost that grows with the message: L*r + n*r_p (what recv_overlap overlaps).
  Time recv_body_cost(int node, std::size_t bytes) const {
    const NodeCosts& c = costs_of(node);
    return static_cast<Time>(bytes) * c.recv_per_byte + static_cast<Time>(net.packets(bytes)) * c.recv_per_packet;
  }
};

}  // namespace touchstone
