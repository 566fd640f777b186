// Source lines of this process's code (docs/debugging.md, "Source lines"): the function, file and
// line of a code address, read in-process from the DWARF of the module that holds it (the
// executable, a shared library, an MPI program's loaded copy) with elfutils' libdw. Reports use it
// to name where a program called: a deadlock's or a check's "at prog.c:9", the watchdog's stacks.
#pragma once
#include <string>

namespace touchstone {

struct SourceLine {
  std::string module;    ///< the file of the module holding the address; empty: no module does
  std::string function;  ///< demangled; empty when the module's symbol tables do not name it
  std::string file;      ///< absolute when the unit names its compile directory; empty without -g
  int line = 0;          ///< 0: not known
  bool has_line() const { return !file.empty() && line > 0; }
};

/// Where the code at `address` comes from. For a return address (a backtrace's frames below the
/// first, a caller noted at a call's entry) pass the call's own address: the return address - 1.
/// Each module's debug information is opened once and kept while its file stays the same; a
/// module without it still gives its function names. Thread-safe.
SourceLine source_line(const void* address);

}  // namespace touchstone
