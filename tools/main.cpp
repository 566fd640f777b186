#include "tools/cli.hpp"

int main(int argc, char** argv) { return touchstone::cli::main(argc, argv); }
