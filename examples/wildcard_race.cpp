// Bug 1: a wildcard receive whose match decides the result (examples/bugs.hpp; docs/debugging.md).
// Build: cmake --build build --target example_wildcard_race; run: build/bin/example_wildcard_race --help
#include "bugs.hpp"
#include "debug_main.hpp"

int main(int argc, char** argv) { return debug_main(argc, argv, "Bug 1: a wildcard receive whose match decides the result", "mesh:2x2", bugs::wildcard_collect); }
