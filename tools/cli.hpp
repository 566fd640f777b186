// The touchstone command line (docs/cli.md). main() is a one-liner around this, so that tests and
// benchmarks can drive the same code.
#pragma once

namespace touchstone::cli {

/// Runs the command line; returns the process exit code. Errors go to stderr.
int main(int argc, char** argv);

}  // namespace touchstone::cli
