// Operations, blocking calls and messages in the words of reports ("recv(source=3, tag=0)",
// "waitall on 4 receive(s)", "message #5 from 2 to 3, ..."): deadlock and livelock reports,
// traces and misuse errors all name them the same way. A blocking call is kept as data (Call)
// and put into words only when a report or a trace needs it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "network.hpp"
#include "op.hpp"

namespace touchstone {
struct RunOptions;
}

namespace touchstone::detail {

/// What a request is, in the words of reports: a copy of the fields that describe_op reads.
struct OpSummary {
  Op::Kind kind = Op::Kind::send;
  bool rendezvous = false, awaiting_data = false, forced = false;
  int src = 0, tag = 0, dst = 0, owner = 0;
  std::uint64_t msg_id = 0, call = 0;
  std::size_t size = 0;
  const Op* op = nullptr;  // which operation, to be told its message's id later (never read through)
  static OpSummary of(const Op& op) {
    return {op.kind, op.rendezvous, op.awaiting_data, op.forced, op.src,  op.tag,
            op.dst,  op.owner,      op.msg_id,        op.call,   op.size, &op};
  }
};

/// "recv(source=3, tag=0)" or "send of message #5 to 3".
std::string describe_op(const OpSummary& op);
inline std::string describe_op(const Op& op) { return describe_op(OpSummary::of(op)); }

/// A blocking call or a poll, kept as data and put into words only when a report or a trace needs
/// it: formatting it on every block cost several percent of the host time per message.
struct Call {
  enum class Form : std::uint8_t { sync, wait_for, waitall_recvs, waitall_for, waitany, probe, iprobe, test_of, barrier };
  Form form = Form::sync;
  OpSummary op;           // wait_for, waitall_for, test_of: the request
  std::size_t count = 0;  // waitall_recvs, waitany, barrier: receives, requests, group members
  int src = 0, tag = 0;   // probe, iprobe: as the program gave them
  static Call on(Form f, const Op& op) { return Call{f, OpSummary::of(op)}; }
  static Call counting(Form f, std::size_t n) { return Call{f, {}, n}; }
};
/// "wait for recv(source=3, tag=0)", "waitall on 4 receive(s)", ...
std::string describe(const Call& c);
/// "  message #5 from 2 to 3, tag 0, 16 bytes, arrived t=1.5 us\n" (a request to send names its data).
std::string describe_msg(const Msg& m);
/// A message no receive took, without its newline: in RunOptions::describe_message's words when it
/// is set (empty: the interface leaves it out), else describe_msg's. `queue`: the receiver's
/// unexpected messages, in which m is.
std::string describe_unreceived(const RunOptions& o, const Msg& m, const Msg* queue);

}  // namespace touchstone::detail
