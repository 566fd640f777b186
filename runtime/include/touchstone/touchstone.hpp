// Umbrella header: everything a user program needs.
#pragma once
#include "touchstone/active_messages.hpp"
#include "touchstone/error.hpp"
#include "touchstone/explore.hpp"
#include "touchstone/group.hpp"
#include "touchstone/machine.hpp"
#include "touchstone/proc.hpp"
#include "touchstone/run.hpp"
#include "touchstone/time.hpp"
#include "touchstone/topology.hpp"
