// One frame of a stack as the runtime's reports print it (the watchdog's stacks, a fatal signal's):
// "  #0 spin_forever at /home/me/prog.c:23 (/tmp/touchstone-mpirun-XXXXXX/prog.1)".
#pragma once
#include <string>

namespace touchstone::detail {

/// The code address `pc` (a call's own address: a return address less one) as
/// "  #index function at file:line (module)", without a newline; without debug information
/// "function" or "symbol+offset", without a symbol the offset in its module. `*is_main` is set
/// when the function is the program's main (a stack below it is the runtime's own).
std::string frame_text(int index, const void* pc, bool* is_main = nullptr);

}  // namespace touchstone::detail
