// The owner of a Vp (engine.hpp): the engine's lists of VPs hold these, and what reads those lists
// (the race detector at the run's end) needs only the name.
#pragma once
#include <memory>

namespace touchstone::detail {

struct Vp;
struct VpRelease;  // engine.hpp: ends a Vp made in the engine's block, or deletes a task context
using VpPtr = std::unique_ptr<Vp, VpRelease>;

}  // namespace touchstone::detail
