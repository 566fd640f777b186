// MPI's partitioned point-to-point communication (MPI-4.0 chapter 4; docs/mpi.md, "Partitioned
// communication"). A partitioned send and receive are persistent requests matched once, in the order
// each side initialized them for its peer and tag. Each matched pair gets a group of its two ranks
// with a context of its own (Proc::subgroup with a key), so its messages never meet the program's or
// another pair's. Each partition the sender marks ready (MPI_Pready) leaves at once as one message,
// tagged with the partition's number; the receiver takes them in as they come whenever the program
// calls MPI (MPI_Parrived, a test or a wait), each into its place: the sender's and the receiver's
// partition counts may differ, only the bytes of the whole buffer must agree.
#include <algorithm>
#include <climits>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "request.hpp"
#include "types.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace touchstone::mpi {
struct Partitioned {
  bool recv = false;
  std::byte* buf = nullptr;
  int partitions = 0;
  MPI_Count count = 0;  // elements per partition
  std::shared_ptr<const Type> type;
  bool proc_null = false;
  Group channel;               // this pair's own context
  int to = 0;                  // the peer's rank in `channel`
  std::size_t part_bytes = 0;  // data bytes of one partition (packed)
  // One start's state. The sender's messages, one per partition marked ready, and for a type with
  // gaps each one's packed copy (send_bytes); the receiver's bytes as they arrive in `staging`.
  std::vector<Request> sends;
  std::vector<char> ready;
  std::vector<std::vector<std::byte>> packed;
  std::vector<std::byte> staging;
  // The receiver's: the sender's partition size (from its first message) and which have arrived,
  // the bytes in so far, and which of its own partitions are unpacked (a type with gaps).
  std::size_t sender_part_bytes = 0;
  std::vector<char> arrived;
  std::size_t received = 0;
  std::vector<char> unpacked;

  std::size_t total() const { return part_bytes * static_cast<std::size_t>(partitions); }
  bool staged() const { return !type->contiguous(); }
  std::byte* partition_address(int i) const {
    return buf + static_cast<MPI_Aint>(i) * static_cast<MPI_Aint>(count) * type->extent;
  }
};
}  // namespace touchstone::mpi

namespace {

// The partitioned request behind handle h, active; MpiError otherwise.
Partitioned& active_partitioned(RankState& rs, MPI_Request h, bool recv) {
  Req* q = find_req(rs, h);
  if (!q) throw MpiError{MPI_ERR_REQUEST, "MPI_REQUEST_NULL is not a partitioned request"};
  if (!q->partitioned || q->partitioned->recv != recv)
    throw MpiError{MPI_ERR_REQUEST,
                   fmt::format("request {} is not a partitioned {} request", h, recv ? "receive" : "send")};
  if (!q->started) throw MpiError{MPI_ERR_REQUEST, fmt::format("request {} is not active: MPI_Start it first", h)};
  return *q->partitioned;
}

void check_partition(const Partitioned& p, int i) {
  if (i < 0 || i >= p.partitions)
    throw MpiError{MPI_ERR_ARG, fmt::format("partition {} out of range 0..{}", i, p.partitions - 1)};
}

// The sender's partition i leaves now.
void ready(RankState& rs, Partitioned& p, int i) {
  check_partition(p, i);
  const auto k = static_cast<std::size_t>(i);
  if (p.ready[k]) throw MpiError{MPI_ERR_ARG, fmt::format("partition {} is marked ready twice in one start", i)};
  p.ready[k] = 1;
  if (p.proc_null || p.part_bytes == 0) return;  // nothing to carry
  const std::span<const std::byte> data =
      send_bytes(p.partition_address(i), static_cast<int>(p.count), *p.type, p.packed[k]);
  p.sends[k] = rs.proc->isend(p.to, i, data, p.channel);
}

// Takes in the sender's messages that have arrived (all of them, blocking, when `block`); true when
// every byte is in.
bool take_in(RankState& rs, Partitioned& p, bool block) {
  const std::size_t total = p.total();
  while (p.received < total) {
    const std::optional<Status> st =
        block ? std::optional(rs.proc->probe(p.to, any_tag, p.channel)) : rs.proc->iprobe(p.to, any_tag, p.channel);
    if (!st) return false;
    if (!p.sender_part_bytes) {
      p.sender_part_bytes = st->size;
      if (st->size == 0 || total % st->size != 0)
        throw MpiError{MPI_ERR_TRUNCATE,
                       fmt::format("the partitioned send's partitions of {} bytes do not make up the {} bytes of the "
                                   "partitioned receive: the two must hold the same data",
                                   st->size, total)};
      p.arrived.assign(total / st->size, 0);
    }
    const auto k = static_cast<std::size_t>(st->tag);
    if (st->size != p.sender_part_bytes || k >= p.arrived.size())
      throw MpiError{MPI_ERR_TRUNCATE,
                     fmt::format("the partitioned send's partition {} ({} bytes) lies beyond the {} bytes of the "
                                 "partitioned receive: the two must hold the same data",
                                 st->tag, st->size, total)};
    std::byte* into = (p.staged() ? p.staging.data() : p.buf) + k * p.sender_part_bytes;
    Request r = rs.proc->irecv(p.to, st->tag, std::span(into, p.sender_part_bytes), p.channel);
    rs.proc->wait(r);
    p.arrived[k] = 1;
    p.received += p.sender_part_bytes;
  }
  return true;
}

// The receiver's partition j has all its bytes (unpacked into the buffer, for a type with gaps).
bool has_arrived(Partitioned& p, int j) {
  if (p.proc_null || p.part_bytes == 0) return true;
  if (!p.sender_part_bytes) return false;
  const auto k = static_cast<std::size_t>(j);
  const std::size_t first = k * p.part_bytes / p.sender_part_bytes,
                    last = ((k + 1) * p.part_bytes - 1) / p.sender_part_bytes;
  for (std::size_t s = first; s <= last; ++s)
    if (!p.arrived[s]) return false;
  if (p.staged() && !p.unpacked[k]) {
    unpack(std::span(p.staging).subspan(k * p.part_bytes, p.part_bytes), p.partition_address(j),
           static_cast<std::size_t>(p.count), *p.type);
    p.unpacked[k] = 1;
  }
  return true;
}

bool complete_send(RankState& rs, Partitioned& p, bool block) {
  if (std::find(p.ready.begin(), p.ready.end(), 0) != p.ready.end()) {
    if (!block) return false;
    std::vector<int> missing;
    for (int i = 0; i < p.partitions && missing.size() < 8; ++i)
      if (!p.ready[static_cast<std::size_t>(i)]) missing.push_back(i);
    throw MpiError{MPI_ERR_REQUEST,
                   fmt::format("waiting for a partitioned send whose partition(s) {}{} are not marked ready would "
                               "wait forever: the rank's one thread must call MPI_Pready for them first",
                               fmt::join(missing, ", "), missing.size() == 8 ? ", ..." : "")};
  }
  for (Request& r : p.sends)
    if (r.active()) {
      if (block)
        rs.proc->wait(r);
      else if (!rs.proc->test(r))
        return false;
    }
  return true;
}

bool complete_recv(RankState& rs, Partitioned& p, bool block) {
  if (!p.proc_null && !take_in(rs, p, block)) return false;
  for (int j = 0; j < p.partitions; ++j) has_arrived(p, j);
  return true;
}

int partitioned_init(const char* name, const void* buf, int partitions, MPI_Count count, MPI_Datatype dt, int peer,
                     int tag, MPI_Comm comm, MPI_Request* request, bool recv) {
  return call(name, comm, [&](RankState& rs) {
    check_out(request, "request");
    if (partitions < 1) throw MpiError{MPI_ERR_ARG, fmt::format("partitions is {}: at least 1", partitions)};
    if (count < 0) throw MpiError{MPI_ERR_COUNT, fmt::format("count is {}: at least 0", count)};
    if (recv && peer == MPI_ANY_SOURCE)
      throw MpiError{MPI_ERR_RANK, "a partitioned receive names its source: MPI_ANY_SOURCE is not allowed"};
    if (recv && tag == MPI_ANY_TAG)
      throw MpiError{MPI_ERR_TAG, "a partitioned receive names its tag: MPI_ANY_TAG is not allowed"};
    auto q = new_request(rs, comm, 0, dt, peer, tag, recv);
    const Comm& c = comm_of(rs, comm);
    auto p = std::make_shared<Partitioned>();
    p->recv = recv;
    p->buf = static_cast<std::byte*>(const_cast<void*>(buf));
    p->partitions = partitions;
    p->count = count;
    p->proc_null = peer == MPI_PROC_NULL;
    if (!p->proc_null) {
      p->type = shared_copy(committed(rs, dt));
      if (count > static_cast<MPI_Count>(INT_MAX) / partitions)
        throw MpiError{MPI_ERR_COUNT, fmt::format("{} partitions of {} elements are more than {} elements", partitions,
                                                  count, INT_MAX)};
      check_buffer(buf, static_cast<int>(count * partitions), *p->type);
      p->part_bytes = static_cast<std::size_t>(count) * p->type->size;
      // The pair's channel: its two ranks, counted apart for each tag and direction, so that the
      // n-th partitioned send from a to b with tag t meets the n-th such receive at b.
      const int me = c.local_base + c.rank, them = c.peer_to_group(peer);
      const int sender = recv ? them : me, receiver = recv ? me : them;
      const std::uint64_t key = static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag)) << 1 | (sender > receiver);
      if (me == them) {
        // One rank makes both ends: the n-th send and the n-th receive share a channel.
        SelfChannels& self = rs.partitioned_self[{c.coll.context(), tag}];
        std::size_t& nth = recv ? self.recvs : self.sends;
        if (nth == self.channels.size()) self.channels.push_back(rs.proc->subgroup(c.coll, {me}, key));
        p->channel = self.channels[nth++];
        p->to = 0;
      } else {
        p->channel = rs.proc->subgroup(c.coll, {std::min(me, them), std::max(me, them)}, key);
        p->to = them < me ? 0 : 1;
      }
    }
    q->persistent = true;
    q->done = true;
    q->status = empty_status();
    q->partitioned = p;
    q->start = [p](RankState&, Req&) {
      p->ready.assign(static_cast<std::size_t>(p->partitions), 0);
      p->sends.clear();
      p->sends.resize(static_cast<std::size_t>(p->partitions));
      p->packed.resize(static_cast<std::size_t>(p->partitions));
      p->sender_part_bytes = 0;
      p->arrived.clear();
      p->received = 0;
      p->unpacked.assign(static_cast<std::size_t>(p->partitions), 0);
      if (!p->proc_null && p->recv && p->staged()) p->staging.assign(p->total(), std::byte{0});
    };
    q->completes = [p, at = &rs, peer, tag](bool block, MPI_Status& status) {
      if (p->proc_null) {
        status = proc_null_status();
        return true;
      }
      if (!(p->recv ? complete_recv(*at, *p, block) : complete_send(*at, *p, block))) return false;
      if (p->recv) {
        status.MPI_SOURCE = peer;
        status.MPI_TAG = tag;
        status.touchstone_bytes = p->total();
      }
      return true;
    };
    *request = new_req(rs, std::move(q));
  });
}
}  // namespace

int MPI_Psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return partitioned_init("MPI_Psend_init", buf, partitions, count, datatype, dest, tag, comm, request, false);
}

int MPI_Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                   MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return partitioned_init("MPI_Precv_init", buf, partitions, count, datatype, source, tag, comm, request, true);
}

int MPI_Pready(int partition, MPI_Request request) {
  return call("MPI_Pready", comm_of_request(request),
              [&](RankState& rs) { ready(rs, active_partitioned(rs, request, false), partition); });
}

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
  return call("MPI_Pready_range", comm_of_request(request), [&](RankState& rs) {
    Partitioned& p = active_partitioned(rs, request, false);
    check_partition(p, partition_low);
    check_partition(p, partition_high);
    if (partition_low > partition_high)
      throw MpiError{MPI_ERR_ARG,
                     fmt::format("partition_low {} is above partition_high {}", partition_low, partition_high)};
    for (int i = partition_low; i <= partition_high; ++i) ready(rs, p, i);
  });
}

int MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request) {
  return call("MPI_Pready_list", comm_of_request(request), [&](RankState& rs) {
    Partitioned& p = active_partitioned(rs, request, false);
    if (length < 0) throw MpiError{MPI_ERR_ARG, fmt::format("length is {}: at least 0", length)};
    if (length > 0) check_out(array_of_partitions, "array_of_partitions");
    for (int i = 0; i < length; ++i) check_partition(p, array_of_partitions[i]);
    for (int i = 0; i < length; ++i) ready(rs, p, array_of_partitions[i]);
  });
}

int MPI_Parrived(MPI_Request request, int partition, int* flag) {
  return call("MPI_Parrived", comm_of_request(request), [&](RankState& rs) {
    check_out(flag, "flag");
    Req* q = find_req(rs, request);
    // A receive that completed and is not started again has nothing left to arrive.
    if (q && q->partitioned && q->partitioned->recv && !q->started) {
      check_partition(*q->partitioned, partition);
      *flag = 1;
      return;
    }
    Partitioned& p = active_partitioned(rs, request, true);
    check_partition(p, partition);
    if (!p.proc_null && !q->done) take_in(rs, p, false);
    *flag = has_arrived(p, partition) ? 1 : 0;
  });
}
