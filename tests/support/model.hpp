// The timing model of docs/model.md (network.cpp's top comment), written out once so that every
// test computes its expected virtual times from the formulas, never from a recorded run.
//
//   h (handed to the network)  = c + C_send + size * send_per_byte + n * send_per_packet - send_tail
//   n (packets)                = max(1, ceil(size / payload))
//   B_k (wire bytes of pkt k)  = min(payload, size - k * payload) + header
//   W (wire bytes, message)    = size + n * header
//   b (bottleneck byte time)   = max(inject, eject, link if d > 0)
//   contention-free arrival    = h + (d + 1) * t_hop + W * b
//   blocking send returns at   = arrival - (d + 1) * t_hop = h + W * b
//   receive completes at       = max(clock, arrival) + C_recv + size * recv_per_byte + n * recv_per_packet
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "touchstone/touchstone.hpp"

namespace ts_test {

using touchstone::Machine;
using touchstone::Time;

/// Every cost nonzero and a distinct prime, so that no two terms of a formula can cancel out.
/// The header is long enough (31 B * 7 ps = 217 ps) that even a header-only worm is longer than
/// (d+1)*t_hop for every route the tests use (d <= 8).
inline Machine prime_machine(const std::string& spec) {
  Machine m = touchstone::parse_machine(spec);
  m.costs.send_overhead = 1009;
  m.costs.send_per_byte = 13;
  m.costs.recv_overhead = 2003;
  m.costs.recv_per_byte = 17;
  m.costs.probe_cost = 307;
  m.net.hop_time = 23;
  m.net.link_byte_time = 7;
  m.net.inject_byte_time = 3;
  m.net.eject_byte_time = 5;
  m.net.packet_payload = 64;
  m.net.packet_header = 31;
  m.net.recv_buffer = -1;
  m.net.inj_ports = m.net.ej_ports = 1;
  return m;
}

struct Model {
  const Machine& m;

  Time hop() const { return m.net.hop_time; }
  std::size_t packets(std::size_t size) const {
    const auto p = static_cast<std::size_t>(m.net.packet_payload);
    return std::max<std::size_t>(1, (size + p - 1) / p);
  }
  /// Wire bytes of packet k of a message of `size` bytes.
  Time wire(std::size_t size, std::size_t k) const {
    const auto p = static_cast<std::size_t>(m.net.packet_payload);
    const std::size_t first = k * p;
    const std::size_t body = size > first ? std::min(p, size - first) : 0;
    return static_cast<Time>(body) + m.net.packet_header;
  }
  /// Wire bytes of the whole message.
  Time wire_total(std::size_t size) const {
    return static_cast<Time>(size) + static_cast<Time>(packets(size)) * m.net.packet_header;
  }
  Time b(int d) const {
    Time x = std::max(m.net.inject_byte_time, m.net.eject_byte_time);
    if (d > 0) x = std::max(x, m.net.link_byte_time);
    return x;
  }
  /// C_send + L*s + n*s_p (docs/model.md 2.2, 2.14).
  Time send_cost(std::size_t size) const {
    return m.costs.send_overhead + static_cast<Time>(size) * m.costs.send_per_byte +
           static_cast<Time>(packets(size)) * m.costs.send_per_packet;
  }
  /// C_recv + L*r + n*r_p (docs/model.md 2.5, 2.14).
  Time recv_cost(std::size_t size) const {
    return m.costs.recv_overhead + static_cast<Time>(size) * m.costs.recv_per_byte +
           static_cast<Time>(packets(size)) * m.costs.recv_per_packet;
  }
  /// The hand-over h: the send's work, less its tail (2.19), never before the send began.
  Time handed(Time clock, std::size_t size) const {
    return std::max(clock, clock + send_cost(size) - m.costs.send_tail);
  }
  /// Contention-free arrival of the last packet of a message handed to the network at h.
  Time arrival_cf(Time h, int d, std::size_t size) const {
    return h + (d + 1) * hop() + wire_total(size) * b(d);
  }
  /// Contention-free time the last packet leaves the injection channel (a blocking send returns).
  Time send_return_cf(Time h, int d, std::size_t size) const { return h + wire_total(size) * b(d); }
  Time recv_done(Time clock, Time arrival, std::size_t size) const {
    return std::max(clock, arrival) + recv_cost(size);
  }
};

inline std::vector<std::byte> bytes(std::size_t n, int seed = 0) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(seed) * 31) & 0xff);
  return v;
}

}  // namespace ts_test
