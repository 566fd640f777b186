// The high bits of a message's matching context (Msg::ctx): what a message is to the program --
// its own, an active message, or a group's internal traffic. Shared by the engine, which sets
// them, and by the parts that must tell the program's messages from the runtime's (instruments,
// reports).
#pragma once
#include <cstdint>

namespace touchstone::detail {

/// Active-message contexts (runtime/src/active_messages.hpp): requests kAmCtx | ticket, replies
/// kAmCtx | kAmReplyBit | ticket, with ticket < 2^60.
inline constexpr std::uint64_t kAmCtx = 1ULL << 61;
inline constexpr std::uint64_t kAmReplyBit = 1ULL << 60;
constexpr bool is_am_request(std::uint64_t ctx) { return ctx >> 60 == 2; }
/// A reply is sent by a handler (AmContext::reply), from the node's CPU but not from the VP's code.
constexpr bool is_am_reply(std::uint64_t ctx) { return ctx >> 60 == 3; }
/// The context bit of a group's internal traffic (software barrier, split): not the user's messages.
inline constexpr std::uint64_t kInternalCtx = 1ULL << 63;
constexpr bool is_internal(std::uint64_t ctx) { return (ctx & kInternalCtx) != 0; }

}  // namespace touchstone::detail
