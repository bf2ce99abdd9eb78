#pragma once
// What the emulator's GoogleTest suites (tests/emu/test_*.cpp) share: device memory of
// the emulated device, a fixture that starts every test on a fresh emulator, and the
// message of the error a launch throws.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "base/errors.h"
#include "emu/emu.h"

namespace wb::emu_testing {

// count elements of device memory, released at scope end; left as device_malloc
// leaves it, or filled from the host with `fill`.
template <class T>
struct DeviceArray {
  explicit DeviceArray(std::size_t count) : p(static_cast<T*>(emu::device_malloc(count * sizeof(T)))), n(count) {}
  DeviceArray(std::size_t count, T fill) : DeviceArray(count) {
    for (std::size_t i = 0; i < count; ++i) p[i] = fill;
  }
  ~DeviceArray() { emu::device_free(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* p;
  std::size_t n;
};

// Every test on a fresh emulator with the default schedule, and leaves none behind.
class EmuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    emu::reset();
    emu::set_schedule({});
  }
  void TearDown() override { emu::reset(); }
};

// The message of the BackendError a launch throws, or "" when it succeeds.
template <class F>
std::string launch_error(F&& f) {
  try {
    f();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "";
}

}  // namespace wb::emu_testing
