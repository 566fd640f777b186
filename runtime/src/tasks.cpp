// Tasks (Proc::spawn, docs/model.md 1.7): execution contexts of a rank beside its own VP, each
// running one task after another with the groups of its spawn (GroupTable::spawn_groups). Apart
// from engine.cpp because a task's life -- started, run, finished, idle until the next -- is not
// a step of a message's way; its messages go the same way as its rank's.
#include <algorithm>

#include <fmt/format.h>

#include "engine.hpp"
#include "touchstone/error.hpp"

namespace touchstone::detail {

Vp& Engine::context(int index) {
  const auto n = vps_.size(), i = static_cast<std::size_t>(index);
  return i < n ? *vps_[i] : *tasks_[i - n];
}

Vp& Engine::acting_task(Vp& v) {
  const int i = executor_->current();
  if (i < static_cast<int>(vps_.size()) || i == kMain) return v;
  Vp& t = *tasks_[static_cast<std::size_t>(i) - vps_.size()];
  return t.home == &v ? t : v;  // another rank's task using this Proc: enter() refuses it
}

// Only once the run is over (retire_idle_task), when no context becomes idle any more: the ranks
// before retire_from_ stay without one.
Vp* Engine::idle_task() {
  for (; retire_from_ < idle_tasks_.size(); ++retire_from_)
    if (auto& idle = idle_tasks_[retire_from_]; !idle.empty()) {
      Vp* t = idle.back();
      idle.pop_back();
      return t;
    }
  return nullptr;
}

// A task runs in a context of its own with the groups of its spawn (GroupTable::spawn_groups): the
// n-th spawn on a group is the same on every member.
Op* Engine::spawn(Vp& v, const Group& scope, std::function<void(const Group&)> task,
                  std::function<std::string()> describe) {
  enter(v);
  const GroupData& s = resolve(v, scope);
  if (GroupTable::member_index(s, v.rank) < 0)
    throw UsageError(fmt::format("rank {} spawned a task on a group it is not a member of", v.rank));
  if (!task) throw UsageError(fmt::format("rank {} spawned an empty task", v.rank));
  Vp& home = *v.home;
  const std::uint64_t nth = home.spawns[s.ctx]++;
  const auto [instance, world] = groups_.spawn_groups(s, nth);
  auto& idle = idle_tasks_[static_cast<std::size_t>(home.rank)];
  Vp* t = nullptr;
  if (!idle.empty()) {
    t = idle.back();
    idle.pop_back();
  } else {
    VpPtr made(new Vp());
    t = made.get();
    t->rank = home.rank;
    t->home = &home;
    t->index = static_cast<int>(vps_.size() + tasks_.size());
    // After every VP, by rank, then by the rank's own count of contexts: what one process of a
    // split run knows of its ranks' tasks (a count over every rank's would need the others').
    const std::size_t own = tasks_of_[static_cast<std::size_t>(home.rank)].size();
    if (own >= (std::size_t{1} << 24))
      throw UsageError(fmt::format("rank {} has 2^24 tasks running at once: more than the runtime orders", v.rank));
    t->order = t->turn_place = vp_order(0) + vps_.size() + (static_cast<std::uint64_t>(home.rank) << 24) + own;
    if (opts_.perturb)
      t->perturb_rng = std::make_unique<std::mt19937_64>(opts_.perturb * 0x9e3779b97f4a7c15ULL +
                                                         static_cast<std::uint64_t>(t->index));
    tasks_.push_back(std::move(made));
    tasks_of_[static_cast<std::size_t>(home.rank)].push_back(t);
    // The context's user is the rank's Proc: Proc::current() in a task is its rank's Proc.
    if (executor_->add(home.proc.get()) != t->index)
      throw std::logic_error("task contexts out of step with the executor's");
  }
  note_clock(*t);
  t->clock = v.clock;
  t->label = v.label;
  t->groups_made.clear();
  t->world_alias = world.shared_data();
  t->task_text = std::move(describe);
  t->task = [fn = std::move(task), instance] { fn(instance); };
  ++busy_tasks_;
  Op* op = new_op();
  op->kind = Op::Kind::task;
  op->owner = v.rank;
  op->vp = &v;
  op->dst = v.rank;
  t->task_op = op;
  ++v.actions;
  instruments_.spawned(v.rank, v.clock, instance.context());
  queue_.push(t->clock, t->order, Ev::resume, t, t->token);
  return op;
}

void Engine::task_main(Vp& t) {
  for (;;) {
    std::function<void()> task = std::move(t.task);
    t.task = nullptr;
    task();
    finish_task(t);
    --busy_tasks_;
    idle_tasks_[static_cast<std::size_t>(t.rank)].push_back(&t);
    block(t, Vp::Block::idle, Call{});
    if (retiring_) return;
  }
}

void Engine::finish_task(Vp& t) {
  Op* op = t.task_op;
  t.task_op = nullptr;
  t.world_alias.reset();
  op->done = t.clock;
  if (op->dropped) return free_op(op);
  Vp& w = *op->vp;
  if (op->awaited && w.state == Vp::State::blocked) queue_.push(op->done, w.order, Ev::resume, &w, w.token);
}

}  // namespace touchstone::detail
