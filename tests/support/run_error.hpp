// The report of a run that must fail with a given error (a RunError: deadlock, livelock, exception
// in VP code; a UsageError: refused input; any touchstone::Error), for tests that check what the
// report says; a run that does not fail so is a test failure.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "touchstone/touchstone.hpp"

namespace ts_test {

template <class E>
std::string failure_of(const touchstone::Machine& m, const touchstone::Program& prog, const touchstone::RunOptions& o = {}) {
  try {
    touchstone::run(m, prog, o);
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "the run did not fail with the expected kind of error";
  return {};
}

inline std::string run_error(const touchstone::Machine& m, const touchstone::Program& prog,
                             const touchstone::RunOptions& o = {}) {
  return failure_of<touchstone::RunError>(m, prog, o);
}

}  // namespace ts_test
