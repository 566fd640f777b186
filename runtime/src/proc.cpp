// The public API (Proc, Request, Group, run) as thin forwarders to the engine.
#include <algorithm>
#include <exception>
#include <type_traits>

#include <fmt/format.h>

#include "checked_time.hpp"
#include "engine.hpp"
#include "touchstone/error.hpp"

namespace touchstone {

using detail::Op;

namespace {
// A Proc call that may wait for other VPs (wait, recv, barrier, ...). A VP that an instant lets go
// on inside it stops where the call returns to its program (Engine::returned), and its program runs
// beside the other VPs' (docs/parallel.md, "The programs of an instant"); so does a VP whose call
// fails there (a message longer than its buffer): the failure is its program's, at its turn. Waits
// inside the runtime's own collectives (split, groups, a software barrier) are not such calls:
// their continuations make more calls before the program runs.
template <class Call>
auto may_wait(detail::Engine& e, detail::Vp& v, Call&& call) -> decltype(call()) {
  struct Inside {
    detail::Vp& v;
    explicit Inside(detail::Vp& vp) : v(vp) { v.in_waiting_call = true; }
    ~Inside() { v.in_waiting_call = false; }
    Inside(const Inside&) = delete;
    Inside& operator=(const Inside&) = delete;
  } inside(v);
  std::exception_ptr failed;
  try {
    if constexpr (std::is_void_v<decltype(call())>) {
      call();
      e.returned(v);
      return;
    } else {
      auto result = call();
      e.returned(v);
      return result;
    }
  } catch (const detail::Aborted&) {
    throw;
  } catch (...) {
    if (!v.instant_member) throw;
    failed = std::current_exception();
  }
  e.returned(v);  // outside the catch block: the program may go on on another host thread
  std::rethrow_exception(failed);
}
}  // namespace

// An operation knows the Request that holds it (Op::holder), so that its engine can detach the
// Request if it outlives the run; moves keep that pointer current.
Request::Request(Op* op) : op_(op) {
  if (op_) op_->holder = this;
}
Request::Request(Request&& o) noexcept : op_(o.op_) {
  o.op_ = nullptr;
  if (op_) op_->holder = this;
}
Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    if (op_) op_->engine->drop(op_);
    op_ = o.op_;
    o.op_ = nullptr;
    if (op_) op_->holder = this;
  }
  return *this;
}

void Request::release() { op_->engine->drop(op_); }

int Group::size() const { return d_ ? static_cast<int>(d_->members.size()) : 0; }
int Group::world_rank(int local) const {
  if (!d_ || local < 0 || local >= size()) throw UsageError(fmt::format("group rank {} out of range", local));
  return d_->members[static_cast<std::size_t>(local)];
}
int Group::local_rank(int world) const {
  if (!d_) return -1;
  auto it = std::lower_bound(d_->by_world.begin(), d_->by_world.end(), std::pair{world, -1});
  return it != d_->by_world.end() && it->first == world ? it->second : -1;
}
std::span<const int> Group::members() const { return d_ ? std::span<const int>(d_->members) : std::span<const int>(); }
std::uint64_t Group::context() const { return d_ ? d_->ctx : 0; }
bool Group::in_world_order() const { return d_ && d_->in_world_order; }

int Proc::rank() const { return v_.rank; }
int Proc::size() const { return e_.machine().nodes(); }
const Machine& Proc::machine() const { return e_.machine(); }
std::uint64_t Proc::seed() const { return e_.options().seed; }
bool Proc::phantom_payloads() const { return e_.options().phantom_payloads; }
std::shared_ptr<void>& Proc::run_local(const void* key) { return e_.run_local(v_, key); }
void Proc::await_turn() { e_.await_turn(self()); }
std::uint32_t Proc::mark() { return e_.mark_place(self()); }
int Proc::hops(int from, int to) const {
  const int n = size();
  if (from < 0 || from >= n || to < 0 || to >= n) throw UsageError(fmt::format("hops({}, {}): rank out of range", from, to));
  e_.await_turn(v_);  // a topology may compute distances lazily, into state the VPs share
  return e_.machine().topology->distance(from, to);
}
Time Proc::now() const { return self().clock; }
void Proc::annotate(std::string_view note, std::source_location where) {
  std::string_view file = where.file_name();
  if (const auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  self().label =
      note.empty() ? fmt::format("{}:{}", file, where.line()) : fmt::format("{}:{} {}", file, where.line(), note);
}
const std::string& Proc::annotation() const { return self().label; }
std::uint64_t Proc::last_receive_call() const { return self().last_recv_call; }
Traffic Proc::traffic() const { return e_.traffic_of(self().rank); }
void Proc::compute(Time dt) {
  may_wait(e_, v_, [&] { e_.compute(self(), dt); });
}
void Proc::leave() { e_.leave(self()); }
bool Proc::await_start() { return e_.await_start(self()); }
void Proc::start(int rank) { e_.start(self(), rank); }
void Proc::local_copy(std::size_t bytes, std::size_t pieces) {
  const NodeCosts& c = e_.machine().costs_of(self().rank);
  // Saturating: a product too large for virtual time is kNever, which compute refuses.
  const Time t = detail::add_sat(detail::mul_sat(bytes, c.copy_per_byte), detail::mul_sat(pieces, c.copy_per_piece));
  if (t > 0) may_wait(e_, v_, [&] { e_.compute(self(), t); });  // a free copy leaves no trace
}

void Proc::send(int dst, int tag, std::span<const std::byte> data, const Group& g) {
  may_wait(e_, v_, [&] {
    Op* op = e_.isend(self(), g, dst, tag, data);
    e_.wait(self(), op);
  });
}
Request Proc::isend(int dst, int tag, std::span<const std::byte> data, const Group& g) {
  return Request(e_.isend(self(), g, dst, tag, data));
}
Request Proc::issend(int dst, int tag, std::span<const std::byte> data, const Group& g) {
  return Request(e_.isend(self(), g, dst, tag, data, true));
}
void Proc::multicast(std::span<const int> dsts, int tag, std::span<const std::byte> data, const Group& g) {
  may_wait(e_, v_, [&] {
    Op* op = e_.imulticast(self(), g, dsts, tag, data);
    e_.wait(self(), op);
  });
}
Request Proc::imulticast(std::span<const int> dsts, int tag, std::span<const std::byte> data, const Group& g) {
  return Request(e_.imulticast(self(), g, dsts, tag, data));
}
Status Proc::recv(int src, int tag, std::span<std::byte> buf, const Group& g) {
  return may_wait(e_, v_, [&] {
    Op* op = e_.irecv(self(), g, src, tag, buf);
    return e_.wait(self(), op);
  });
}
Request Proc::irecv(int src, int tag, std::span<std::byte> buf, const Group& g) {
  return Request(e_.irecv(self(), g, src, tag, buf));
}
Request Proc::irecv_truncating(int src, int tag, std::span<std::byte> buf, const Group& g) {
  return Request(e_.irecv(self(), g, src, tag, buf, true));
}
Status Proc::wait(Request& r) {
  return may_wait(e_, v_, [&] { return e_.wait(self(), r.op_); });
}
std::vector<Status> Proc::waitall(std::span<Request> rs) {
  std::vector<Status> st(rs.size());
  waitall(rs, st);
  return st;
}
void Proc::waitall(std::span<Request> rs, std::span<Status> statuses) {
  if (!statuses.empty() && statuses.size() != rs.size())
    throw UsageError(fmt::format("waitall: {} statuses for {} requests (give one per request, or none)",
                                 statuses.size(), rs.size()));
  may_wait(e_, v_, [&] {
    detail::Vp& me = self();
    std::vector<Op*>& ops = me.request_ops;  // reused: no allocation per call
    ops.resize(rs.size());
    // The requests give up their operations now; waitall completes (and frees) every one of them.
    for (std::size_t i = 0; i < rs.size(); ++i) ops[i] = rs[i].op_, rs[i].op_ = nullptr;
    try {
      e_.waitall(me, ops, statuses);
    } catch (...) {
      for (std::size_t i = 0; i < rs.size(); ++i) rs[i].op_ = ops[i];
      throw;
    }
  });
}
std::size_t Proc::waitany(std::span<Request> rs, Status* status) {
  return may_wait(e_, v_, [&] {
    std::vector<Op*>& ops = self().request_ops;
    ops.assign(rs.size(), nullptr);
    for (std::size_t i = 0; i < rs.size(); ++i) ops[i] = rs[i].op_;
    std::size_t i = 0;
    try {
      i = e_.waitany(self(), ops, status);
    } catch (...) {
      for (std::size_t k = 0; k < rs.size(); ++k) rs[k].op_ = ops[k];
      throw;
    }
    rs[i].op_ = nullptr;
    return i;
  });
}
bool Proc::test(Request& r, Status* status) {
  return may_wait(e_, v_, [&] { return e_.test(self(), r.op_, status); });
}
bool Proc::cancel(Request& r) { return e_.cancel(self(), r.op_); }
Status Proc::probe(int src, int tag, const Group& g) {
  return may_wait(e_, v_, [&] { return *e_.probe(self(), g, src, tag, true); });
}
std::optional<Status> Proc::iprobe(int src, int tag, const Group& g) {
  return may_wait(e_, v_, [&] { return e_.probe(self(), g, src, tag, false); });
}
Status Proc::sendrecv(int dst, int send_tag, std::span<const std::byte> data, int src, int recv_tag,
                      std::span<std::byte> buf, const Group& g) {
  Request s = isend(dst, send_tag, data, g);
  Status st = recv(src, recv_tag, buf, g);
  wait(s);
  return st;
}
void Proc::barrier(const Group& g) {
  may_wait(e_, v_, [&] { e_.barrier(self(), g); });
}
Request Proc::spawn(const Group& scope, std::function<void(const Group& instance)> task) {
  return Request(e_.spawn(self(), scope, std::move(task), {}));
}
Request Proc::spawn(const Group& scope, std::function<void(const Group& instance)> task,
                    std::function<std::string()> describe) {
  return Request(e_.spawn(self(), scope, std::move(task), std::move(describe)));
}
detail::Vp& Proc::self() const { return e_.acting(v_); }

Group Proc::world() const { return e_.world(self()); }
Group Proc::group(std::vector<int> world_ranks) {
  e_.enter(self());
  return e_.make_group(self(), e_.world(self()).context(), std::move(world_ranks));
}
Group Proc::group_like(const Group& like) {
  e_.enter(self());
  return e_.make_group_like(self(), e_.world(self()).context(), like);
}
namespace {
// The world ranks of parent's members `parent_ranks`, checked.
std::vector<int> world_ranks_of(const Group& p, const std::vector<int>& parent_ranks) {
  std::vector<int> members;
  members.reserve(parent_ranks.size());
  for (int r : parent_ranks) {
    if (r < 0 || r >= p.size())
      throw UsageError(fmt::format("subgroup: rank {} out of range, the parent has {} member(s)", r, p.size()));
    members.push_back(p.world_rank(r));
  }
  return members;
}
}  // namespace
Group Proc::subgroup(const Group& parent, const std::vector<int>& parent_ranks) {
  e_.enter(self());
  const Group p = parent.is_world_placeholder() ? world() : parent;
  return e_.make_group(self(), p.context(), world_ranks_of(p, parent_ranks));
}
Group Proc::subgroup(const Group& parent, const std::vector<int>& parent_ranks, std::uint64_t key) {
  e_.enter(self());
  const Group p = parent.is_world_placeholder() ? world() : parent;
  return e_.make_group_with_key(self(), p.context(), world_ranks_of(p, parent_ranks), key);
}
Group Proc::split(const Group& parent, int color, int key) {
  e_.enter(self());
  return e_.split(self(), parent, color, key);
}

namespace {
std::pair<int, int> mesh_shape(const Machine& m) {
  auto d = m.topology->dims();
  if (d.size() == 1) return {1, d[0]};
  if (d.size() == 2) return {d[0], d[1]};
  throw UsageError(fmt::format("mesh group helpers need a 1-D or 2-D grid machine, not {}", m.name));
}
}  // namespace

Group Proc::submesh(int row0, int col0, int rows, int cols, bool snake) {
  auto [R, C] = mesh_shape(machine());
  if (rows < 1 || cols < 1 || row0 < 0 || col0 < 0 || row0 + rows > R || col0 + cols > C)
    throw UsageError(fmt::format("sub-mesh at ({}, {}) of {}x{} does not fit in the {}x{} mesh", row0, col0, rows, cols, R, C));
  std::vector<int> members;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int col = snake && r % 2 ? cols - 1 - c : c;
      members.push_back((row0 + r) * C + col0 + col);
    }
  return group(std::move(members));
}
Group Proc::mesh_row(int row) { return submesh(row, 0, 1, mesh_shape(machine()).second); }
Group Proc::mesh_column(int column) { return submesh(0, column, mesh_shape(machine()).first, 1); }
Group Proc::snake_half(int row0, int col0, int rows, int cols, int half) {
  if (half != 0 && half != 1) throw UsageError(fmt::format("snake_half: half must be 0 or 1 (got {})", half));
  Group all = submesh(row0, col0, rows, cols, true);
  const int n = all.size(), first = (n + 1) / 2;
  std::vector<int> picks;
  for (int i = half ? first : 0; i < (half ? n : first); ++i) picks.push_back(i);
  return subgroup(all, picks);
}

RunResult run(const Machine& machine, const Program& program, const RunOptions& options) {
  if (!machine.topology || machine.nodes() < 1) throw UsageError("the machine has no nodes");
  detail::check_run_inputs(machine, options);  // no cost of this run can overflow virtual time
  if (options.eager_limit) {
    if (*options.eager_limit < NetworkParams::kNoFlowControl)
      throw UsageError(fmt::format("eager_limit must be >= 0, or -1 for no flow control (got {})", *options.eager_limit));
    Machine with = machine;
    with.net.eager_limit = *options.eager_limit;
    detail::Engine engine(with, options);
    return engine.run(program);
  }
  detail::Engine engine(machine, options);
  return engine.run(program);
}

}  // namespace touchstone
