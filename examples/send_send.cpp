// Bug 2: a send-send exchange that deadlocks only with bounded receive buffers (examples/bugs.hpp; docs/debugging.md).
// Build: cmake --build build --target example_send_send; run: build/bin/example_send_send --help
#include "bugs.hpp"
#include "debug_main.hpp"

int main(int argc, char** argv) { return debug_main(argc, argv, "Bug 2: a send-send exchange that deadlocks only with bounded receive buffers", "mesh:1x2,buffer=65536", bugs::send_send_exchange); }
