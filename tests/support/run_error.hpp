// The report of a run that must fail with a RunError (deadlock, livelock, exception in VP code),
// for tests that check what the report says; a run that does not fail so is a test failure.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "touchstone/touchstone.hpp"

namespace ts_test {

inline std::string run_error(const touchstone::Machine& m, const touchstone::Program& prog,
                             const touchstone::RunOptions& o = {}) {
  try {
    touchstone::run(m, prog, o);
  } catch (const touchstone::RunError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the run did not fail with a RunError";
  return {};
}

}  // namespace ts_test
