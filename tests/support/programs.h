#pragma once
// The programs of this build that the suites of wb_tests run as a user does, from the
// paths the target's compile definitions give: wb over the planted registry (and the
// fixture of its checks in the emulator), and the trainer on one OpenMP thread.
#include <gtest/gtest.h>

#include <string>

#include "emu/emu.h"
#include "tests/planted/planted.h"
#include "tests/support/test_helpers.h"
#include "workbench/runtime/report.h"

namespace wb::testing {

// wb_planted: wb over planted_registry(), the variants of tests/planted/ beside wb's.
inline Result run_planted(const std::string& args) { return run_command(WB_PLANTED, args); }
// A report wb_planted wrote, read over the registry that knows its variants.
inline Report read_planted_report(const std::string& path) { return read_report(path, planted_registry()); }

// A suite of wb_planted's checks in the emulator that needs the plain build's access
// reports (its counters and checks; the sanitized builds have none): skipped in the
// others. dir_ holds what its runs write.
class PlainEmulatorSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!emu::reports_accesses())
      GTEST_SKIP() << "the plain build's access reports (this is the " << emu::flavour() << " flavour)";
  }

  TempDir dir_;
};

// The trainer on one OpenMP thread: on a loaded machine, threads that wait for a core
// make a 3 ms step of a small model take 200 ms. Every CPU variant computes bitwise the
// same at any thread count, so the results are those of any other count.
inline const std::string& one_thread_trainer() {
  static const std::string command = std::string("OMP_NUM_THREADS=1 ") + WB_TRAINER;
  return command;
}
inline Result run_one_thread_trainer(const std::string& args) { return run_command(one_thread_trainer(), args); }

}  // namespace wb::testing
