// What every fuzz harness checks: a rejected input is a touchstone::Error with a
// message; an accepted machine is one no run can overflow, with routes inside its channel set.
// A failed invariant aborts, so libFuzzer reports the input that broke it.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "touchstone/touchstone.hpp"

namespace ts_fuzz {

/// A scratch file for harnesses that fuzz file contents, one per process (NAME_PID.EXT). In
/// /dev/shm when it exists: writing and truncating a file on the disk's file system per input
/// made fuzz_switchnet spend most of its time in open, close and write-back (about 30 inputs a
/// second); the tools read it like any regular file. Removed at exit; call once per process.
inline std::string scratch_file(const std::string& name, const std::string& ext) {
  static std::string path;
  std::error_code ec;
  const bool shm = std::filesystem::is_directory("/dev/shm", ec);
  path = (shm ? std::string("/dev/shm/") : std::filesystem::temp_directory_path().string() + "/") + name + "_" +
         std::to_string(::getpid()) + ext;
  std::atexit([] { std::remove(path.c_str()); });
  return path;
}

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

inline void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// A literal message costs nothing until it is needed (checks run per entry and per channel).
inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

/// Runs f; a touchstone::Error is a clean rejection (its message must say something), anything
/// else escaping is a bug.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const touchstone::Error& e) {
    check(std::string(e.what()).size() > 10, std::string("an error without a message: '") + e.what() + "'");
  } catch (const std::exception& e) {
    fail(std::string("a rejection that is not a touchstone::Error: ") + e.what());
  }
}

/// The invariants of an accepted machine: nodes, costs within the caps of touchstone/time.hpp,
/// packets within 2^30 + 2^20 bytes, and routes (between sampled pairs) that name only channels
/// of the topology and are as long as its distance.
inline void check_machine(const touchstone::Machine& m) {
  using namespace touchstone;
  check(m.topology != nullptr, "no topology");
  const int n = m.nodes();
  check(n >= 1 && n <= (1 << 24), "node count " + std::to_string(n));
  auto within = [](Time t, Time cap) { return t >= 0 && t <= cap; };
  check(m.node_costs.empty() || m.node_costs.size() == static_cast<std::size_t>(n), "node_costs size");
  // In place: copying node_costs per input was a tenth of the harness's time on large machines.
  auto costs_within = [&](const NodeCosts& c) {
    check(within(c.send_overhead, kMaxOverheadTime) && within(c.recv_overhead, kMaxOverheadTime) &&
              within(c.probe_cost, kMaxOverheadTime),
          "per-message cost out of range");
    check(within(c.send_per_byte, kMaxPerUnitTime) && within(c.recv_per_byte, kMaxPerUnitTime) &&
              within(c.send_per_packet, kMaxPerUnitTime) && within(c.recv_per_packet, kMaxPerUnitTime) &&
              within(c.match_per_entry, kMaxPerUnitTime) && within(c.copy_per_byte, kMaxPerUnitTime) &&
              within(c.copy_per_piece, kMaxPerUnitTime),
          "per-unit cost out of range");
  };
  costs_within(m.costs);
  for (const NodeCosts& c : m.node_costs) costs_within(c);
  const NetworkParams& net = m.net;
  check(within(net.hop_time, kMaxOverheadTime) && within(net.barrier_latency, kMaxOverheadTime), "hop/barrier time");
  check(within(net.link_byte_time, kMaxPerUnitTime) && within(net.inject_byte_time, kMaxPerUnitTime) &&
            within(net.eject_byte_time, kMaxPerUnitTime),
        "byte time out of range");
  check(net.packet_payload >= 1 && net.packet_payload <= (1 << 30) && net.packet_header >= 0 &&
            net.packet_header <= (1 << 20),
        "packet size");
  check(net.inj_ports >= 1 && net.ej_ports >= 1, "ports");
  const std::size_t links = m.topology->link_channels();
  std::vector<LinkId> path;
  const int pairs[][2] = {{0, n - 1}, {n - 1, 0}, {n / 2, n / 3}, {n / 3, n - 1 - n / 5}};
  for (const auto& p : pairs) {
    path.clear();
    m.topology->route(p[0], p[1], path);
    // The message is built only on failure: a route crosses up to n channels, and building it for
    // each made a valid 1-D mesh of 492707 nodes take over 60 s under ASan (a libFuzzer timeout).
    for (const LinkId l : path)
      if (l >= links) fail("route names channel " + std::to_string(l) + " of " + std::to_string(links));
    check(static_cast<int>(path.size()) == m.topology->distance(p[0], p[1]), "route length != distance");
    check(p[0] != p[1] || path.empty(), "a route from a node to itself");
  }
}

}  // namespace ts_fuzz
