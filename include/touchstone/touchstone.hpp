// Umbrella header: everything a user program needs — the runtime (Proc, run, machines' types),
// the machine catalog (parse_machine) and the topologies.
#pragma once
#include "touchstone/active_messages.hpp"
#include "touchstone/error.hpp"
#include "touchstone/explore.hpp"
#include "touchstone/group.hpp"
#include "touchstone/machine.hpp"
#include "touchstone/machines.hpp"
#include "touchstone/proc.hpp"
#include "touchstone/run.hpp"
#include "touchstone/time.hpp"
#include "touchstone/topologies/fat_tree.hpp"
#include "touchstone/topologies/grid.hpp"
#include "touchstone/topologies/hpam.hpp"
#include "touchstone/topologies/switch_network.hpp"
#include "touchstone/topology.hpp"
