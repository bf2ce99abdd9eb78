// CUDA-graph capture on the emu executor (Executor::begin_capture, end_capture and
// replay over emu/emu.h's recording): what a captured step records is what a direct run
// does, bit for bit; a replay runs the kernels again with the pointers and arguments of
// the capture; what a captured step may not do (allocate, synchronise, copy to the host,
// copy from pageable host memory, record a timing marker) throws, naming the call and the
// work, and leaves the executor usable; the emulated cuBLAS and cuDNN SDPA are recorded
// too. The cpu backend cannot capture.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/bf16.h"
#include "base/errors.h"
#include "contract/ops/attention_forward.h"
#include "contract/ops/layernorm_forward.h"
#include "contract/ops/matmul_forward.h"
#include "contract/ops/residual_forward.h"
#include "emu/emu.h"
#include "tests/planted/planted.h"
#include "tests/support/test_helpers.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

using testing::contains;

// n floats in [-1, 1), the same for the same seed.
std::vector<float> pattern(std::size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = float(x >> 8) / float(1u << 23) - 1.0f;
  }
  return v;
}

class GraphCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    emu::set_schedule({});
    ex_ = make_executor(Backend::emu);
  }
  void TearDown() override {
    for (void* p : buffers_) ex_->release(p);
    ex_.reset();
    emu::reset();
  }

  // Device memory holding `values` (released at the end of the test).
  float* upload(const std::vector<float>& values) {
    float* p = empty(values.size());
    ex_->to_device(p, values.data(), values.size() * sizeof(float));
    return p;
  }
  float* empty(std::size_t n) {
    void* p = ex_->allocate(n * sizeof(float));
    ex_->poison(p, n * sizeof(float));
    buffers_.push_back(p);
    return static_cast<float*>(p);
  }
  std::vector<float> download(const float* p, std::size_t n) {
    std::vector<float> v(n);
    ex_->to_host(v.data(), p, n * sizeof(float));
    return v;
  }
  static bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  }
  static bool all_poison(const std::vector<float>& v) {
    for (float f : v) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      if (bits != 0xFFFFFFFFu) return false;
    }
    return true;
  }

  // Runs a variant of the planted registry (wb's own and the test-only ones) at its
  // default launch parameters, as the harness and the trainer do: through Variant::run.
  void run(const std::string& op, int id, const void* args) {
    const Variant* v = testing::planted_registry().find(op, Backend::emu, id);
    ASSERT_NE(v, nullptr) << op << " emu/" << id;
    ASSERT_TRUE(v->run) << op << " emu/" << id << " is not emulated";
    Launch l;
    for (const TuningParam& p : v->params) l.params.set(p.name, p.default_value);
    l.ctx = ex_->context();
    v->run(args, l);
  }

  // A residual_forward of n elements: out = inp1 + inp2.
  struct Residual {
    ResidualForwardArgs args;
    std::vector<float> inp1, inp2;
    std::vector<float> expected() const {
      std::vector<float> e(inp1.size());
      for (std::size_t i = 0; i < e.size(); ++i) e[i] = inp1[i] + inp2[i];
      return e;
    }
  };
  Residual residual(std::size_t n, uint32_t seed) {
    Residual r;
    r.inp1 = pattern(n, seed);
    r.inp2 = pattern(n, seed + 1);
    r.args = ResidualForwardArgs{empty(n), upload(r.inp1), upload(r.inp2), int64_t(n)};
    return r;
  }

  std::unique_ptr<Executor> ex_;
  std::vector<void*> buffers_;
};

// (a) A layernorm_forward emu/3 (warp per row) captured and replayed twice gives what
// a direct run gives, bit for bit; the capture itself runs nothing (out stays poison).
TEST_F(GraphCapture, ReplayEqualsTheDirectRunBitwise) {
  const int B = 2, T = 5, C = 40;
  const std::size_t rows = B * T, n = rows * C;
  float* out = empty(n);
  float* mean = empty(rows);
  float* rstd = empty(rows);
  const LayernormForwardArgs args{out, mean, rstd, upload(pattern(n, 1)), upload(pattern(C, 2)), upload(pattern(C, 3)),
                                  B,   T,    C};
  ex_->working_on("layernorm_forward emu/3 direct");
  run("layernorm_forward", 3, &args);
  ex_->synchronize();
  const std::vector<float> direct = download(out, n), direct_mean = download(mean, rows),
                           direct_rstd = download(rstd, rows);

  ex_->poison(out, n * sizeof(float));
  ex_->poison(mean, rows * sizeof(float));
  ex_->poison(rstd, rows * sizeof(float));
  ex_->working_on("layernorm_forward emu/3 captured");
  ex_->begin_capture();
  EXPECT_TRUE(ex_->capturing());
  run("layernorm_forward", 3, &args);
  std::unique_ptr<CapturedGraph> graph = ex_->end_capture();
  EXPECT_FALSE(ex_->capturing());
  ASSERT_EQ(graph->size(), 1u);
  EXPECT_EQ(graph->backend(), Backend::emu);
  EXPECT_TRUE(all_poison(download(out, n))) << "the capture ran the kernel instead of recording it";

  for (int replay = 0; replay < 2; ++replay) {
    ex_->poison(out, n * sizeof(float));
    ex_->replay(*graph);
    ex_->synchronize();
    EXPECT_TRUE(bitwise_equal(download(out, n), direct)) << "replay " << replay;
    EXPECT_TRUE(bitwise_equal(download(mean, rows), direct_mean)) << "replay " << replay;
    EXPECT_TRUE(bitwise_equal(download(rstd, rows), direct_rstd)) << "replay " << replay;
  }
}

// (b) A replay reruns the kernels on the buffers of the capture: new contents of an
// input give a new output. And the arguments are baked in by value: the argument
// struct the capture read is changed (another output, N = 1) and then destroyed
// before the replay, which still writes all n elements of the first output.
TEST_F(GraphCapture, ReplayRerunsWithTheArgumentsOfTheCapture) {
  const std::size_t n = 300;
  Residual r = residual(n, 10);
  float* other_out = empty(n);
  std::unique_ptr<CapturedGraph> graph;
  {
    auto args = std::make_unique<ResidualForwardArgs>(r.args);
    ex_->begin_capture();
    run("residual_forward", 1, args.get());
    graph = ex_->end_capture();
    args->out = other_out;
    args->N = 1;
  }
  ex_->replay(*graph);
  ex_->synchronize();
  EXPECT_TRUE(bitwise_equal(download(r.args.out, n), r.expected()));
  EXPECT_TRUE(all_poison(download(other_out, n)));

  r.inp1 = pattern(n, 99);  // new contents, same buffer
  ex_->to_device(const_cast<float*>(r.args.inp1), r.inp1.data(), n * sizeof(float));
  ex_->replay(*graph);
  ex_->synchronize();
  EXPECT_TRUE(bitwise_equal(download(r.args.out, n), r.expected())) << "the replay did not follow the new input";
}

// (c) Each call a captured step may not make throws, naming the call and the work,
// and ends the capture (end_capture then says what abandoned it).
TEST_F(GraphCapture, ForbiddenCallsThrowNamingTheCallAndTheWork) {
  float* buffer = empty(16);
  std::vector<float> host(16, 1.0f);
  const auto markers = ex_->make_markers(1);  // made before the capture, as a timed step's are
  struct Forbidden {
    const char* call;
    const char* why;
    std::function<void()> make;
  };
  const std::vector<Forbidden> calls = {
      {"Executor::allocate", "may not allocate", [&] { ex_->allocate(64); }},
      {"Executor::synchronize", "may not synchronise", [&] { ex_->synchronize(); }},
      {"Executor::to_host", "may not copy to the host", [&] { ex_->to_host(host.data(), buffer, 64); }},
      {"Executor::to_device", "pageable host memory", [&] { ex_->to_device(buffer, host.data(), 64); }},
      {"a device allocation", "may not allocate", [&] { emu::device_free(emu::device_malloc(64)); }},
      {"Markers::record", "may not record a timing marker", [&] { markers->record(0); }},
  };
  for (const Forbidden& f : calls) {
    ex_->working_on("residual_forward emu/1 block_size=256");
    ex_->begin_capture();
    std::string message;
    try {
      f.make();
    } catch (const emu::CaptureError& e) {
      message = e.what();
    }
    EXPECT_TRUE(contains(message, std::string(f.call) + " inside a CUDA-graph capture "
                                                        "(while running residual_forward emu/1 block_size=256): "))
        << f.call << ": " << message;
    EXPECT_TRUE(contains(message, f.why)) << message;
    EXPECT_FALSE(ex_->capturing()) << f.call;
    try {
      ex_->end_capture();
      ADD_FAILURE() << "end_capture after " << f.call << " returned a graph";
    } catch (const UsageError& e) {
      EXPECT_TRUE(contains(e.what(), "the capture was abandoned: " + std::string(f.call))) << e.what();
    }
  }
  // A pageable upload's message says why it is a bug: the replay would read the buffer.
  ex_->begin_capture();
  try {
    ex_->to_device(buffer, host.data(), 64);
  } catch (const emu::CaptureError& e) {
    EXPECT_TRUE(contains(e.what(), "reads the host buffer when the graph is replayed")) << e.what();
  }
  // A free abandons the capture (release cannot throw): end_capture says so.
  void* scratch = ex_->allocate(64);
  ex_->begin_capture();
  ex_->release(scratch);
  EXPECT_FALSE(ex_->capturing());
  EXPECT_THROW(ex_->end_capture(), UsageError);
  // Misuse: nested, ended twice, replayed inside a capture.
  ex_->begin_capture();
  EXPECT_THROW(ex_->begin_capture(), UsageError);
  std::unique_ptr<CapturedGraph> empty_graph = ex_->end_capture();
  EXPECT_EQ(empty_graph->size(), 0u);
  EXPECT_THROW(ex_->end_capture(), UsageError);
  ex_->begin_capture();
  EXPECT_THROW(ex_->replay(*empty_graph), UsageError);
  ex_->end_capture();
}

// (d) residual_forward emu/98 allocates a scratch buffer on every launch: correct
// outside a capture, caught at its cudaMalloc inside one, named with the variant. (e)
// Then the executor works: a launch runs, a new capture records and replays.
TEST_F(GraphCapture, AnAllocatingVariantIsCaughtAndTheExecutorRecovers) {
  const std::size_t n = 200;
  Residual r = residual(n, 20);
  ex_->working_on("residual_forward emu/98 planted_allocates block_size=128");
  run("residual_forward", 98, &r.args);
  ex_->synchronize();
  EXPECT_TRUE(bitwise_equal(download(r.args.out, n), r.expected())) << "emu/98 is correct outside a capture";

  ex_->poison(r.args.out, n * sizeof(float));
  ex_->begin_capture();
  std::string message;
  try {
    run("residual_forward", 98, &r.args);
  } catch (const emu::CaptureError& e) {
    message = e.what();
  }
  EXPECT_TRUE(contains(message,
                       "cudaMalloc inside a CUDA-graph capture (while running residual_forward emu/98 "
                       "planted_allocates block_size=128): a captured step may not allocate"))
      << message;
  EXPECT_FALSE(ex_->capturing());
  EXPECT_FALSE(ex_->lost());

  // (e) The executor is usable: a direct launch, then a capture and its replay.
  ex_->working_on("residual_forward emu/1");
  run("residual_forward", 1, &r.args);
  ex_->synchronize();
  EXPECT_TRUE(bitwise_equal(download(r.args.out, n), r.expected()));
  ex_->poison(r.args.out, n * sizeof(float));
  ex_->begin_capture();
  run("residual_forward", 1, &r.args);
  std::unique_ptr<CapturedGraph> graph = ex_->end_capture();
  EXPECT_EQ(graph->size(), 1u);
  ex_->replay(*graph);
  ex_->synchronize();
  EXPECT_TRUE(bitwise_equal(download(r.args.out, n), r.expected()));
}

// (f) matmul_forward emu/5: cublasSgemm (emulated through OpenBLAS, emu/cublas.cpp)
// with alpha and beta on the launcher's stack, then the bias kernel. Both are recorded;
// the replay, long after those host scalars are gone, equals the direct run bitwise.
TEST_F(GraphCapture, TheEmulatedCublasIsRecordedAndReplayed) {
  const int B = 2, T = 3, C = 24, OC = 20;
  const std::size_t rows = B * T;
  float* out = empty(rows * OC);
  const MatmulForwardArgs args{
      out, upload(pattern(rows * C, 5)), upload(pattern(std::size_t(OC) * C, 6)), upload(pattern(OC, 7)), B, T, C, OC};
  ex_->working_on("matmul_forward emu/5");
  run("matmul_forward", 5, &args);
  ex_->synchronize();
  const std::vector<float> direct = download(out, rows * OC);

  ex_->poison(out, rows * OC * sizeof(float));
  ex_->begin_capture();
  run("matmul_forward", 5, &args);
  std::unique_ptr<CapturedGraph> graph = ex_->end_capture();
  ASSERT_EQ(graph->size(), 2u);
  EXPECT_TRUE(all_poison(download(out, rows * OC))) << "the capture ran the product instead of recording it";
  for (int replay = 0; replay < 2; ++replay) {
    ex_->poison(out, rows * OC * sizeof(float));
    ex_->replay(*graph);
    ex_->synchronize();
    EXPECT_TRUE(bitwise_equal(download(out, rows * OC), direct)) << "replay " << replay;
  }
}

// (g) attention_forward_bf16 emu/3: cuDNN's fused SDPA (the emulator's stand-in,
// device/cuda/cudnn_sdpa_emu.cpp), one library call and no kernel of its own. The capture
// records it by value and runs nothing; each replay writes what the direct run wrote,
// out and lse bit for bit.
TEST_F(GraphCapture, TheEmulatedCudnnSdpaIsRecordedAndReplayed) {
  const int B = 1, T = 5, C = 16, NH = 2;  // head size 8: cuDNN's multiple of 8
  const std::size_t rows = std::size_t(B) * T, stats = std::size_t(B) * NH * T;
  std::vector<bf16> qkv(rows * 3 * C);
  const std::vector<float> values = pattern(qkv.size(), 8);
  for (std::size_t i = 0; i < qkv.size(); ++i) qkv[i] = to_bf16(values[i]);
  // bf16 tensors in float-sized allocations: C is even, so each holds whole floats
  auto* device_qkv = reinterpret_cast<bf16*>(empty(qkv.size() / 2));
  ex_->to_device(device_qkv, qkv.data(), qkv.size() * sizeof(bf16));
  float* out = empty(rows * C / 2);
  float* lse = empty(stats);
  const AttentionForwardBf16Args args{reinterpret_cast<bf16*>(out), lse, device_qkv, B, T, C, NH};
  ex_->working_on("attention_forward_bf16 emu/3");
  run("attention_forward_bf16", 3, &args);
  ex_->synchronize();
  const std::vector<float> direct_out = download(out, rows * C / 2), direct_lse = download(lse, stats);
  ASSERT_FALSE(all_poison(direct_out)) << "the direct run wrote nothing";

  ex_->poison(out, rows * C / 2 * sizeof(float));
  ex_->poison(lse, stats * sizeof(float));
  ex_->begin_capture();
  run("attention_forward_bf16", 3, &args);
  std::unique_ptr<CapturedGraph> graph = ex_->end_capture();
  ASSERT_EQ(graph->size(), 1u);
  EXPECT_TRUE(all_poison(download(out, rows * C / 2))) << "the capture ran the call instead of recording it";
  for (int replay = 0; replay < 2; ++replay) {
    ex_->poison(out, rows * C / 2 * sizeof(float));
    ex_->poison(lse, stats * sizeof(float));
    ex_->replay(*graph);
    ex_->synchronize();
    EXPECT_TRUE(bitwise_equal(download(out, rows * C / 2), direct_out)) << "replay " << replay;
    EXPECT_TRUE(bitwise_equal(download(lse, stats), direct_lse)) << "replay " << replay;
  }
}

// The names of a recording, in order: the library call, then the kernel with its work.
TEST(GraphCaptureEmu, TheRecordingNamesItsOperations) {
  emu::reset();
  void* p = emu::device_malloc(64);
  emu::begin_capture();
  EXPECT_EQ(emu::device_memset(p, 0, 64), 0);
  const emu::Graph g = emu::end_capture();
  ASSERT_EQ(g.operations(), std::vector<std::string>{"cudaMemsetAsync of 64 bytes"});
  static_cast<unsigned char*>(p)[0] = 7;
  EXPECT_EQ(g.replay(), 0);
  EXPECT_EQ(static_cast<unsigned char*>(p)[0], 0);
  emu::device_free(p);
}

// The cpu backend runs on the calling thread: nothing to capture, and it says so.
TEST(GraphCaptureCpu, IsNotSupported) {
  std::unique_ptr<Executor> cpu = make_executor(Backend::cpu);
  ASSERT_TRUE(cpu->capture_unsupported());
  EXPECT_TRUE(contains(*cpu->capture_unsupported(), "not supported on the cpu backend"));
  EXPECT_THROW(cpu->begin_capture(), UsageError);
  EXPECT_FALSE(cpu->capturing());
}

}  // namespace
}  // namespace wb
