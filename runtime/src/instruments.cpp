#include "instruments.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "contexts.hpp"

namespace touchstone::detail {

Instruments::Instruments(int nodes, const RunOptions& options)
    : trace_file_(options.trace_file),
      order_log_file_(options.order_log_file),
      explain_(options.explain),
      phantom_payloads_(options.phantom_payloads),
      describe_race_(options.describe_race),
      sent_(static_cast<std::size_t>(nodes), 0) {
  if (!trace_file_.empty() || !order_log_file_.empty()) recorder_ = std::make_unique<Recorder>(nodes);
  if (options.races != RaceCheck::off) {
    races_ = std::make_unique<RaceDetector>(nodes);
    received_.assign(static_cast<std::size_t>(nodes), 0);
  }
}

void Instruments::watch(Network& network) {
  if (!recorder_ && !explain_) return;
  blame_ = std::make_unique<Blame>(network, recorder_.get());
  network.set_observer(blame_.get());
}

void Instruments::close_batch() {
  if (!batch_width_) return;
  BatchStats& b = stats_.batches;
  ++b.instants;
  b.widest = std::max(b.widest, batch_width_);
  for (std::size_t i = 0; i < BatchStats::kCoreCounts; ++i) {
    const auto w = static_cast<std::uint64_t>(BatchStats::kCores[i]);
    b.rounds[i] += (batch_width_ + w - 1) / w;
  }
  batch_width_ = 0;
}

namespace {
Recorder::Wire wire_of(const Msg& m) {
  using Wire = Recorder::Wire;
  switch (m.proto) {
    case Msg::Proto::rts: return Wire::rendezvous_request;
    case Msg::Proto::cts: return Wire::clear_to_send;
    case Msg::Proto::rdv_data: return Wire::rendezvous_data;
    case Msg::Proto::sync_ack: return Wire::acknowledgement;
    case Msg::Proto::eager: break;
  }
  return Wire::message;
}
}  // namespace

std::size_t Instruments::hold_sent(const Msg& m) {
  if (!recorder_) return kNotHeld;
  held_.push_back(recorder_->hold(m.src, m.proto == Msg::Proto::eager && is_am_reply(m.ctx), wire_of(m)));
  return held_.size() - 1;
}

std::size_t Instruments::hold_multicast(int rank, const Msg& lead) {
  if (!recorder_) return kNotHeld;
  const std::size_t first = held_.size();
  for (std::size_t k = 0; k < lead.branch.size(); ++k)
    held_.push_back(recorder_->hold(rank, false, Recorder::Wire::message));
  return first;
}

// The trace's send span is the CPU's work, to `handed`; the message leaves before that by the
// send's tail (docs/model.md 2.19).
void Instruments::record_sent(const Msg& m, Time start, Time handed, std::size_t held) {
  using Wire = Recorder::Wire;
  const Recorder::Place* at = held == kNotHeld ? nullptr : &held_.at(held);
  const Wire wire = wire_of(m);
  switch (wire) {
    case Wire::message:
      recorder_->sent(m.id, m.src, m.dst, m.tag, m.size, start, handed, is_am_reply(m.ctx), wire, at);
      break;
    case Wire::rendezvous_request:
      recorder_->sent(m.rdv->id, m.src, m.dst, m.tag, m.rdv->size, start, handed, false, wire, at);
      break;
    case Wire::clear_to_send: recorder_->sent(m.rdv->id, m.src, m.dst, m.tag, 0, start, handed, false, wire, at); break;
    case Wire::acknowledgement: recorder_->sent(m.acked, m.src, m.dst, m.tag, 0, start, handed, false, wire, at); break;
    case Wire::rendezvous_data:
      recorder_->sent(m.id, m.src, m.dst, m.tag, m.size, start, handed, false, wire, at);
      break;
  }
}

void Instruments::multicast_sent(int rank, Msg& lead, Time start, Time end, bool by_task, std::size_t held) {
  if (!by_task) ++sent_[static_cast<std::size_t>(rank)];
  for (std::size_t k = 0; k < lead.branch.size(); ++k) {
    Msg* m = lead.branch[k];
    hash_.add(m->id, static_cast<std::uint64_t>(rank) << 32 | static_cast<std::uint32_t>(m->dst),
              static_cast<std::uint64_t>(start) ^ (m->ctx * 31 + static_cast<std::uint64_t>(m->tag)) ^ (m->size << 40) ^
                  0x3c);
    ++stats_.messages;
    stats_.payload_bytes += m->size;
    if (races_ && k > 0) m->vc = lead.vc;  // one send event (send_posted): every branch carries its vector
    if (recorder_)
      recorder_->sent(m->id, rank, m->dst, m->tag, m->size, start, end, false, Recorder::Wire::message,
                      held == kNotHeld ? nullptr : &held_.at(held + k));
  }
}

void Instruments::race_received(int rank, const Op& op, const Msg& m) {
  races_->on_complete(rank, op, m);
  if (is_internal(m.ctx) || (m.ctx & kAmCtx)) return;
  // The data a VP received, for exploration's "other data received" (explore.cpp).
  std::uint64_t h = received_[static_cast<std::size_t>(rank)] * 0x100000001b3ULL;
  h ^= static_cast<std::uint64_t>(m.src) << 40 ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(m.tag)) ^
       m.size << 20;
  // The bytes are in the receive buffer since the match (Engine::deliver); phantom messages carry none.
  const std::size_t n = std::min(m.size, op.buf.size());
  const std::span<const std::byte> got =
      phantom_payloads_ ? std::span<const std::byte>() : std::span<const std::byte>(op.buf).first(n);
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < got.size(); i += 8) {
    const std::size_t k = std::min<std::size_t>(8, got.size() - i);
    word = 0;
    std::memcpy(&word, got.data() + i, k);
    h = (h ^ word) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  received_[static_cast<std::size_t>(rank)] = h;
}

// Names what ended the wait: the message a receive got (its arrow leads back to the sender).
void Instruments::record_wait(int rank, Time since, Time clock, const Call& what, const WaitList& waited, Stamp began) {
  std::string more;
  for (const Op* op : waited)
    if (op->kind == Op::Kind::recv && op->matched)
      more += fmt::format("; got message #{} from {}, arrived t={} us", op->matched->id, op->matched->src,
                          to_us(op->matched->arrival));
  recorder_->blocked(rank, since, clock, describe(what), more, began);
}

// The evidence of a failed run shows where every VP was stuck when it failed (a zero-length span
// too: where the VP stood).
void Instruments::unwound(int rank, Time since, Time now, const Call& what, Stamp began) {
  if (!recorder_) return;
  recorder_->blocked(rank, since, std::max(since, now), describe(what), " (when the run failed)", began, true);
}

void Instruments::run_ended(Time now, std::span<const Time> clocks) {
  if (blame_) blame_->finish(now);  // who blocked whom: waits still open end here
  for (std::size_t r = 0; r < clocks.size(); ++r)
    hash_.add(0xf1, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(clocks[r]));
}

std::uint64_t Instruments::add_to_failure(std::string& report, bool shares, bool races) const {
  // Each part on lines of its own: a failure's message (as a VP's error) need not end its line.
  const auto new_line = [&report] { return report.empty() || report.back() == '\n' ? "" : "\n"; };
  if (explain_) {
    report += new_line();  // appended apart: g++ 12 warns (-Wrestrict) about "..." + std::string&&
    report += blame_->explain();
  }
  // The races seen up to the failure are often its cause.
  if (races_ && races && !races_->races().empty())
    report += new_line() + std::string("Races up to the failure:\n") +
              describe_races(described(races_->races()), describe_race_);
  // The events up to the failure are deterministic, so their hash identifies the failed run
  // (a replay with --schedule must show it is the same run). A split run's processes have summed
  // their terms (Engine::combine_counts); after a failure inside a window each had run as far as it
  // got in that window, and the window's sends were not numbered, so the sum is not the single
  // process's (`shares`).
  const std::uint64_t h = hash_.value();
  report += fmt::format("{}trace_hash {:016x} (of {})\n", new_line(), h, failed_hash_of(shares));
  return h;
}

void Instruments::fill(RunResult& res) {
  close_batch();
  res.stats = stats_;
  res.sent = sent_;
  res.trace_hash = hash_.value();
  if (explain_) res.explanation = blame_->explain();
  if (races_) {
    res.races = described(races_->races());
    res.received = received_;
  }
}

std::vector<Race> Instruments::described(std::vector<Race> races) const {
  if (describe_race_)
    for (Race& r : races)
      if (r.described.empty()) r.described = describe_race_(r);
  return races;
}

void Instruments::share_races(Packed& out, int first, int end) const {
  const std::vector<Race> found = described(races_->races(true));
  out.put(found.size());
  for (const Race& r : found) RaceDetector::put(out, r);
  for (int r = first; r < end; ++r) out.put(received_[static_cast<std::size_t>(r)]);
}

void Instruments::take_races(Unpacker& in, int first, int end, std::vector<Race>& into) {
  const auto n = in.take<std::size_t>();
  for (std::size_t i = 0; i < n; ++i) into.push_back(RaceDetector::take(in));
  for (int r = first; r < end; ++r) received_[static_cast<std::size_t>(r)] = in.take<std::uint64_t>();
}

std::string Instruments::write_evidence(bool failed, const std::string& machine, Time upto, bool ran_on,
                                        bool shares) const {
  if (!recorder_) return {};
  if (!failed) {
    recorder_->write(trace_file_, order_log_file_, machine, hash_.value(), false);
    return {};
  }
  std::vector<std::string> files;
  if (!trace_file_.empty()) files.push_back(fmt::format("the trace '{}'", trace_file_));
  if (!order_log_file_.empty()) files.push_back(fmt::format("the order log '{}'", order_log_file_));
  try {
    recorder_->write(trace_file_, order_log_file_, machine, hash_.value(), true, shares);
  } catch (const std::exception& e) {
    return fmt::format("\nNo evidence written: {}\n", e.what());
  }
  // A split run's processes went on to the end of the window the failure fell in (docs/parallel.md).
  if (ran_on)
    return fmt::format(
        "\nWritten with what every process of the split run recorded up to t={} us, where they "
        "stopped after the failure: {}.\n",
        to_us(upto), fmt::join(files, " and "));
  return fmt::format("\nWritten up to the failure at t={} us: {}.\n", to_us(upto), fmt::join(files, " and "));
}

}  // namespace touchstone::detail
