// Many-to-many personalized communication with bounded traffic (paper 003, Ranka, Shankar and
// Alsabti): every processor P_i sends m_ij bytes to every P_j of a communication matrix M.
// The send buffer of P_i holds its row, the messages to P_0 .. P_{p-1} one after the other; the
// receive buffer of P_j holds its column, the messages from P_0 .. P_{p-1} one after the other.
//
// Every processor is handed the whole matrix (the paper's first step, "generate receive vector
// recv from the send vectors in all the processors", is not charged: see docs/paper003.md).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/traffic.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// Fig. 3, modified linear permutation: in step k = 1..p-1 (p a power of two: partner i XOR k;
/// otherwise send to i+k, receive from i-k) each processor exchanges the messages of the
/// required lengths with its partner, then all barrier-synchronize. `payloads` false (phantom
/// payloads, nothing checked): the messages keep their sizes but have no bytes of their own.
void alltoallv_linear_permutation(Proc& p, const TrafficMatrix& m, std::span<const std::byte> send,
                                  std::span<std::byte> recv, bool payloads = true);

/// Section 6: the two-stage algorithm. Stage 1 splits every message into p parts (Stg1pp, Fig. 7,
/// with the round-robin remainder) and sends part k to intermediary P_k; stage 2 (Stg2pp, Fig. 8)
/// forwards every part to its destination. Each stage is a modified linear permutation, and every
/// message carries p part lengths ahead of its data. `shuffled` (section 6.3): the source reshuffles
/// its intermediaries at random among those receiving messages of the same size and sends the
/// permutation along (p more entries per stage-1 message, and an index per part in stage 2).
/// `headers_arrive` false (phantom payloads: the messages keep their sizes but carry no bytes):
/// the headers are still sent, but their values are computed from the matrix, which every
/// processor holds, instead of read, so the timing is that of the real run; under phantom
/// payloads the messages then have no bytes of their own (spans of one region the run shares).
void alltoallv_two_stage(Proc& p, const TrafficMatrix& m, std::span<const std::byte> send, std::span<std::byte> recv,
                         bool shuffled, bool headers_arrive = true);

/// Section 5, Fig. 4: distributed random scheduling. Every processor owns a busy lock (a
/// registered word). Receives are pre-posted into the receive buffer; then each processor picks a
/// destination it still owes at random (seeded by the run's seed and its rank), takes the
/// destination's lock with a remote test_and_set (an active-message round trip) and, if it was
/// free, sends the whole message and frees the lock with a one-way active message; if it was busy,
/// it picks again. Finally it waits for every incoming message. `plus` adds section 5's two
/// improvements: a busy destination answers with how long it will stay busy (the senders skip it
/// for that long and, when every destination they owe is busy, sleep for the least of those), and
/// a destination whose current transfer is about to end grants the next one early. Handlers and
/// locks are registered once per run: the algorithm may be called once per run.
void alltoallv_random_scheduling(Proc& p, const TrafficMatrix& m, std::span<const std::byte> send,
                                 std::span<std::byte> recv, bool plus);

/// Fig. 7 (Stg1pp) for one source: len(k, j) is the number of bytes of the message to destination
/// j that go through intermediary k: sendl[j] div p each, and the sendl[j] mod p remaining bytes
/// dealt round robin over k, continuing from one destination to the next. The bytes of
/// destination j are split in order: intermediary 0 carries the first len(0, j), and so on.
/// Kept in O(p) (where each destination's remainder starts), not as the p x p matrix: a processor
/// that computes every source's plan (two-stage under phantom payloads) would hold p^3 entries.
class Stage1Plan {
 public:
  explicit Stage1Plan(std::span<const std::int64_t> sendl);
  int size() const { return static_cast<int>(base_.size()); }
  std::int64_t len(int k, int j) const;
  /// The bytes of part set k: every destination's len(k, j) together.
  std::int64_t total(int k) const;

 private:
  std::vector<std::int64_t> base_, rem_, first_;  // per destination: div p, mod p, the k its remainder starts at
  std::int64_t base_total_ = 0, rem_total_ = 0;
};

/// Section 6.3: for one source, a permutation `perm` of the intermediaries such that the plan's
/// part set k goes to intermediary perm[k], and perm only swaps part sets of equal total size.
std::vector<int> stage1_shuffle(const Stage1Plan& plan, std::uint64_t seed);

}  // namespace touchstone::algorithms
