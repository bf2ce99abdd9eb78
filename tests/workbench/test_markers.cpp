// Timing markers on an executor's stream (Executor::make_markers, executor.h): on every
// backend, markers recorded in order give times that never run backwards and add up; a
// pool is reused by recording again; a marker out of the pool or never recorded is a bug
// of the caller (std::logic_error); and inside a CUDA-graph capture a marker is refused,
// naming the call, like the executor's other calls a captured step may not make. The
// cuda cases skip without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "emu/emu.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

class MarkersOn : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::cuda)
      if (auto why = cuda_unavailable_reason()) GTEST_SKIP() << "no usable CUDA device: " << *why;
    ex_ = make_executor(GetParam());
    buffer_ = ex_->allocate(kBytes);
  }
  void TearDown() override {
    if (ex_ && buffer_) ex_->release(buffer_);
    ex_.reset();
    if (GetParam() == Backend::emu) emu::reset();
  }
  // Work on the stream between two markers.
  void work() { ex_->zero(buffer_, kBytes); }

  static constexpr std::size_t kBytes = std::size_t(1) << 20;
  std::unique_ptr<Executor> ex_;
  void* buffer_ = nullptr;
};

// Four markers with work between them: each step forward is at least zero, the time
// from the first grows with each later marker, and the parts add up to the whole.
TEST_P(MarkersOn, RecordedInOrderTheyGiveMonotoneTimes) {
  const auto markers = ex_->make_markers(4);
  ASSERT_EQ(markers->size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    markers->record(i);
    if (i < 3) work();
  }
  ex_->synchronize();
  double previous = 0;
  for (std::size_t j = 1; j < 4; ++j) {
    const double step = markers->seconds_between(j - 1, j), from_first = markers->seconds_between(0, j);
    EXPECT_GE(step, 0.0) << j;
    EXPECT_GE(from_first, previous) << j;
    previous = from_first;
  }
  const double parts = markers->seconds_between(0, 1) + markers->seconds_between(1, 2) + markers->seconds_between(2, 3);
  // cuda: each elapsed time is a float of milliseconds, rounded on its own.
  EXPECT_NEAR(parts, markers->seconds_between(0, 3), 1e-6 + 1e-6 * parts);
  EXPECT_EQ(markers->seconds_between(2, 2), 0.0);

  // Reused: marker 0 recorded again, after marker 3, now lies after it.
  work();
  markers->record(0);
  ex_->synchronize();
  EXPECT_GE(markers->seconds_between(3, 0), 0.0);
}

// Out of the pool, or read before it was recorded: the caller's bug, said as such.
TEST_P(MarkersOn, MisuseIsALogicError) {
  const auto markers = ex_->make_markers(2);
  try {
    markers->record(2);
    ADD_FAILURE() << "record(2) of a pool of 2 did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("Markers::record: marker 2 of a pool of 2"), std::string::npos) << e.what();
  }
  markers->record(0);
  ex_->synchronize();
  try {
    markers->seconds_between(0, 1);
    ADD_FAILURE() << "seconds_between an unrecorded marker did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("marker 1 was never recorded"), std::string::npos) << e.what();
  }
  EXPECT_THROW(markers->seconds_between(0, 5), std::logic_error);
  const auto empty = ex_->make_markers(0);
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_THROW(empty->record(0), std::logic_error);
}

// Inside a capture (emu, cuda) recording or reading a marker is refused, naming the call
// and the work, and abandons the capture as the executor's other refused calls do
// (emu: emu::CaptureError; cuda: UsageError). Markers made before the capture stay
// usable after it.
TEST_P(MarkersOn, InsideACaptureTheyAreRefusedNamingTheCall) {
  if (ex_->capture_unsupported()) GTEST_SKIP() << *ex_->capture_unsupported();
  const auto markers = ex_->make_markers(2);
  markers->record(0);
  markers->record(1);
  ex_->synchronize();
  for (const char* call : {"Markers::record", "Markers::seconds_between"}) {
    ex_->working_on("a timed step");
    ex_->begin_capture();
    std::string message = "no error";
    try {
      if (std::string(call) == "Markers::record")
        markers->record(1);
      else
        markers->seconds_between(0, 1);
    } catch (const std::exception& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(std::string(call) + " inside a CUDA-graph capture (while running a timed step): "),
              std::string::npos)
        << message;
    EXPECT_FALSE(ex_->capturing()) << call;
    try {
      ex_->end_capture();
      ADD_FAILURE() << "end_capture after " << call << " returned a graph";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("the capture was abandoned: " + std::string(call)), std::string::npos)
          << e.what();
    }
  }
  ex_->working_on("");
  markers->record(0);
  work();
  markers->record(1);
  ex_->synchronize();
  EXPECT_GE(markers->seconds_between(0, 1), 0.0);
}

// The emu capture refuses with its own exception type, as for to_host.
TEST(Markers, TheEmulatorRefusesWithItsCaptureError) {
  auto ex = make_executor(Backend::emu);
  const auto markers = ex->make_markers(1);
  ex->begin_capture();
  EXPECT_THROW(markers->record(0), emu::CaptureError);
  EXPECT_FALSE(ex->capturing());
  ex.reset();
  emu::reset();
}

INSTANTIATE_TEST_SUITE_P(Backends, MarkersOn, ::testing::Values(Backend::cpu, Backend::emu, Backend::cuda),
                         [](const ::testing::TestParamInfo<Backend>& p) { return std::string(to_string(p.param)); });

}  // namespace
}  // namespace wb
