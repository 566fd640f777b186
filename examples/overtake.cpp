// Bug 3: a flag that overtakes the data through a shorter route (examples/bugs.hpp; docs/debugging.md).
// Build: cmake --build build --target example_overtake; run: build/bin/example_overtake --help
#include "bugs.hpp"
#include "debug_main.hpp"

int main(int argc, char** argv) { return debug_main(argc, argv, "Bug 3: a flag that overtakes the data through a shorter route", "mesh:2x2,ports=2", bugs::overtaking_flag); }
