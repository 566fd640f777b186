#include "describe.hpp"

#include <fmt/format.h>

#include "touchstone/proc.hpp"
#include "touchstone/run.hpp"

namespace touchstone::detail {

namespace {
std::string rank_str(int r) { return r == any_source ? "any" : std::to_string(r); }
std::string tag_str(int t) { return t == any_tag ? "any" : std::to_string(t); }
}  // namespace

std::string describe_op(const OpSummary& op) {
  if (op.kind == Op::Kind::send && op.rendezvous)
    return fmt::format("send of message #{} to rank {} ({} bytes, rendezvous: waiting for the receiver to post a "
                       "matching receive)",
                       op.msg_id, op.dst, op.size);
  if (op.kind == Op::Kind::send) return fmt::format("send of message #{} to {}", op.msg_id, op.dst);
  if (op.kind == Op::Kind::task) return fmt::format("task of rank {} (spawned with Proc::spawn)", op.owner);
  if (op.awaiting_data)
    return fmt::format("recv(source={}, tag={}), waiting for the data of rendezvous message #{}", rank_str(op.src),
                       tag_str(op.tag), op.msg_id);
  // A forced wildcard says so: the program asked for any source, the schedule picked this one
  // (a schedule that picks a rank whose message never comes deadlocks here).
  if (op.forced)
    return fmt::format("recv(source=any, tag={}), forced by --schedule {}:{}={} to take rank {}'s message",
                       tag_str(op.tag), op.owner, op.call, op.src, op.src);
  return fmt::format("recv(source={}, tag={})", rank_str(op.src), tag_str(op.tag));
}

std::string describe(const Call& c) {
  switch (c.form) {
    case Call::Form::sync: return "catching up with virtual time";
    case Call::Form::wait_for: return "wait for " + describe_op(c.op);
    case Call::Form::waitall_recvs: return fmt::format("waitall on {} receive(s)", c.count);
    case Call::Form::waitall_for: return "waitall for " + describe_op(c.op);
    case Call::Form::waitany: return fmt::format("waitany on {} request(s)", c.count);
    case Call::Form::probe: return fmt::format("probe(source={}, tag={})", rank_str(c.src), tag_str(c.tag));
    case Call::Form::iprobe: return fmt::format("iprobe(source={}, tag={})", rank_str(c.src), tag_str(c.tag));
    case Call::Form::test_of: return "test of " + describe_op(c.op);
    case Call::Form::barrier: return fmt::format("barrier of a group of {}", c.count);
  }
  return {};
}

std::string describe_msg(const Msg& m) {
  if (m.proto == Msg::Proto::rts)
    return fmt::format("  request to send message #{} from {} to {}, tag {}, {} bytes (rendezvous), arrived t={} us\n",
                       m.rdv->id, m.src, m.dst, m.tag, m.rdv->size, to_us(m.arrival));
  return fmt::format("  message #{} from {} to {}, tag {}, {} bytes, arrived t={} us\n", m.id, m.src, m.dst, m.tag,
                     m.size, to_us(m.arrival));
}

std::string describe_unreceived(const RunOptions& o, const Msg& m, const Msg* queue) {
  if (!o.describe_message) {
    std::string line = describe_msg(m);
    line.pop_back();
    return line;
  }
  RunOptions::UnreceivedMessage u{m.src, m.dst, m.tag, m.ctx, m.envelope_size(), 0, 0};
  bool ahead = true;
  for (const Msg* e = queue; e; e = e->next) {
    if (e == &m) ahead = false;
    if (e->src == m.src && e->tag == m.tag && e->ctx == m.ctx) ++(ahead ? u.earlier : u.queued);
  }
  u.queued += u.earlier;
  std::string text = o.describe_message(u);
  return text.empty() ? text : fmt::format("  {}, arrived t={} us", text, to_us(m.arrival));
}

}  // namespace touchstone::detail
