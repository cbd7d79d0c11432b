// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <systemc>

#include <cstdlib>

#include "common/system.hpp"
#include "helpers.hpp"

namespace dvp::test {
// Models a test builds at the top level (not inside a Soc) report into this system. Each test
// runs in a process of its own, so each has a fresh one.
System& bench_system() {
  static System s;
  return s;
}
}  // namespace dvp::test

int sc_main(int argc, char* argv[]) {
  ::testing::InitGoogleTest(&argc, argv);
  dvp::System::Scope scope(dvp::test::bench_system());
  return RUN_ALL_TESTS();
}

// As in dvp: no kernel banner in the test output.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
