// `wb check --backend emu` in the plain build catches each class of bug the emulator
// checks for, end to end: the planted variants 92-96 of tests/planted/ (residual_forward
// with one bug each) through the harness's schedules (the interleaving pass, blocks one
// at a time), each in its own child (--isolate: a fault costs that variant only).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "contract/registry.h"
#include "emu/emu.h"
#include "tests/support/programs.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

using testing::contains;
using testing::read_planted_report;
using testing::Result;
using testing::run_planted;

class EmuPlanted : public testing::PlainEmulatorSuite {
 protected:
  // Checks the planted variants at the tiny and odd shapes; the records by variant.
  std::map<int, std::vector<Record>> check(const std::string& extra, Result* result = nullptr) {
    const std::string json = dir_ / "report.json";
    const Result r = run_planted(
        "check residual_forward --backend emu --variants 1,92,93,94,95,96 "
        "--shapes tiny,odd --seed 11 --isolate --json " +
        json + extra);
    if (result) *result = r;
    std::map<int, std::vector<Record>> by_variant;
    for (const Record& rec : read_planted_report(json).records) by_variant[rec.variant].push_back(rec);
    return by_variant;
  }
};

// Every record of the variant has the status, and the first incorrect one's reason
// holds `reason`.
void expect_all(const std::vector<Record>& records, Status status, const std::string& reason = "") {
  ASSERT_FALSE(records.empty());
  for (const Record& r : records) EXPECT_EQ(r.status, status) << r.variant << " " << r.shape_text() << ": " << r.reason;
  if (!reason.empty()) {
    EXPECT_TRUE(contains(records.front().reason, reason)) << records.front().reason;
  }
}

TEST_F(EmuPlanted, EachClassFailsTheCheckWithItsFault) {
  Result r;
  auto records = check("", &r);
  EXPECT_EQ(r.code, 1) << r.output;
  expect_all(records[1], Status::ok);
  // The racy next++ loses updates in the interleaving pass (the second run).
  expect_all(records[92], Status::incorrect, "second run:");
  // Block 0 waits for the last block: when the blocks run one at a time, the watchdog.
  expect_all(records[93], Status::incorrect, "watchdog: kernel planted_waits_for_last");
  // A write into the guard region after the buffer: an illegal address, named.
  expect_all(records[95], Status::incorrect, "cudaErrorIllegalAddress");
  EXPECT_TRUE(contains(records[95].front().reason, "bytes past the end of a device buffer"))
      << records[95].front().reason;
  // A read past the end reads the canary's NaN.
  expect_all(records[96], Status::incorrect, "not finite");
}

// docs/porting-example.md's two ports of a public ladder's softmax kernels, as written
// (softmax_forward emu/90, emu/91) and fixed (92, 93): the check finds what the
// ladder's own test, at one shape with rows longer than any block, does not.
TEST_F(EmuPlanted, ThePortingExamplesPortsFailAsItSaysAndTheirFixesPass) {
  const std::string json = dir_ / "ports.json";
  const Result r = run_planted(
      "check softmax_forward --backend emu --variants 90,91,92,93 --shapes tiny,ragged --seed 5 --isolate --json " +
      json);
  EXPECT_EQ(r.code, 1) << r.output;
  std::map<int, std::map<std::string, Record>> at;  // variant -> shape -> record
  for (const Record& rec : read_planted_report(json).records) at[rec.variant][rec.shape_text()] = rec;
  const std::string tiny = "B=2 T=3 V=11 Vp=16", ragged = "B=3 T=43 V=101 Vp=104";
  // The slot reused for the maximum and the sum: harmless at tiny (its 11 values sit in
  // warp 0, so no other warp uses the maximum), wrong when a warp runs alone.
  EXPECT_EQ(at[90][tiny].status, Status::ok) << at[90][tiny].reason;
  EXPECT_EQ(at[90][ragged].status, Status::incorrect);
  EXPECT_TRUE(contains(at[90][ragged].reason, "each warp alone")) << at[90][ragged].reason;
  // The early return: lanes at or past V=11 leave while the others shuffle.
  EXPECT_EQ(at[91][tiny].status, Status::incorrect);
  EXPECT_TRUE(contains(at[91][tiny].reason, "exits while lanes of its warp wait for it at the collective"))
      << at[91][tiny].reason;
  for (int fixed : {92, 93})
    for (const std::string& shape : {tiny, ragged})
      EXPECT_EQ(at[fixed][shape].status, Status::ok) << fixed << " at " << shape << ": " << at[fixed][shape].reason;
}

TEST_F(EmuPlanted, ABarrierAfterThreadsExitedIsANoteAndAFaultWhenStrict) {
  auto records = check("");
  expect_all(records[94], Status::ok);
  bool noted = false;
  for (const Record& rec : records[94])
    for (const std::string& n : rec.notes) noted |= contains(n, "synccheck note: __syncthreads at tests/planted/");
  EXPECT_TRUE(noted) << "the tiny shape (48 elements, blocks of 32) has threads past the end";
  auto strict = check(" --strict-sync");
  bool faulted = false;
  for (const Record& rec : strict[94])
    faulted |= rec.status == Status::incorrect && contains(rec.reason, "(--strict-sync)");
  EXPECT_TRUE(faulted);
  expect_all(strict[1], Status::ok);
}

// Blocks that meet through atomics (residual_forward emu/85-88, 261 blocks at the odd
// shape): a kernel that assumes block 0 starts first fails the third run only, whose
// blocks start with block 0 last; one whose block 0 zeroes plainly what the others add
// atomically is a racecheck fault of the interleaving pass (the second run), its
// output being right; atomics against atomics and the last-block pattern (a
// __threadfence, then a ticket, and the last block writes the sum plainly) pass. On one
// worker (OMP_NUM_THREADS=1), so that the first two runs start block 0 first for
// certain: with two, a worker preempted while it holds block 0 lets the others finish
// first, and 86 may fail in the first run already (its bug is real there too).
TEST_F(EmuPlanted, BlockOrderAndPlainAgainstAtomicAcrossBlocksAreCaughtEachByItsRun) {
  const std::string json = dir_ / "across.json";
  const Result r = testing::run_command(
      std::string("OMP_NUM_THREADS=1 ") + WB_PLANTED,
      "check residual_forward --backend emu --variants 85,86,87,88 --shapes odd --seed 11 "
      "--isolate --json " +
      json);
  EXPECT_EQ(r.code, 1) << r.output;
  std::map<int, std::vector<Record>> at;
  for (const Record& rec : read_planted_report(json).records) at[rec.variant].push_back(rec);
  expect_all(at[85], Status::ok);
  expect_all(at[88], Status::ok);
  expect_all(at[86], Status::incorrect,
             "third run (each warp alone from one barrier to the next, the blocks started "
             "reversed or shuffled with block 0 last): ");
  // A fault of the interleaving pass, the only run that checks across blocks.
  expect_all(at[87], Status::incorrect, "racecheck: kernel planted_across_blocks");
  ASSERT_FALSE(at[87].empty());
  const std::string& race = at[87].front().reason;
  EXPECT_TRUE(contains(race, "block (0,0,0)")) << "names the block that zeroes the sum: " << race;
  EXPECT_TRUE(contains(race, "plain write")) << race;
  EXPECT_TRUE(contains(race, "atomic update")) << race;
  EXPECT_TRUE(contains(race, "tests/planted/planted_faults.cu:")) << "names both sites: " << race;
}

// Runs `wb_planted check <op> --backend emu <flags>`, which a planted fault must fail
// (exit 1) while none of the correct `controls` is reported incorrect, and every variant
// is emulated (a control that is not run passes nothing); its output, for what is
// expected of the planted variants.
std::string check_fails(const std::string& op, const std::string& flags, const std::vector<int>& controls) {
  const Result r = run_planted("check " + op + " --backend emu " + flags);
  EXPECT_EQ(r.code, 1) << r.output;
  for (int id : controls)
    EXPECT_FALSE(contains(r.output, "INCORRECT " + op + " emu/" + std::to_string(id) + " ")) << r.output;
  EXPECT_FALSE(contains(r.output, "not emulated")) << r.output;
  return r.output;
}

// A planted fault that the check catches in every flavour, beside correct controls.
struct PlantedFault {
  std::string name;  // the test's
  std::string op;
  std::string flags;                  // which variants, at which shapes and seed
  std::vector<int> controls;          // the correct variants among them
  std::vector<std::string> reported;  // what the output says of the planted ones
  bool triton = false;                // needs this build's Triton rungs (the Python venv)
};

// Whether this build has Triton rungs (the venv was ready when it was configured).
bool triton_built() {
  for (const OpSpec* op : Registry::global().ops())
    for (const Variant* v : Registry::global().variants(op->name, Backend::emu))
      if (is_triton_rung(*v)) return true;
  return false;
}

class PlantedFaultIsCaught : public ::testing::TestWithParam<PlantedFault> {};

TEST_P(PlantedFaultIsCaught, ByTheCheck) {
  const PlantedFault& fault = GetParam();
  if (fault.triton && !triton_built())
    GTEST_SKIP() << "this build has no Triton rung: the Python venv was not ready when it was configured";
  const std::string out = check_fails(fault.op, fault.flags, fault.controls);
  for (const std::string& line : fault.reported) EXPECT_TRUE(contains(out, line)) << line << "\n" << out;
}

const PlantedFault kPlantedFaults[] = {
    // A bf16 variant that rounds toward zero: outside half an ulp in many elements, and
    // the mean signed error shows the truncation. The sum of two bf16 often has a single
    // bit past bf16's: truncation takes off half an ulp from those and nothing from the
    // exact ones (-0.4 ulp over the distinct values at this seed: the exact sums repeat
    // more often).
    {"Bf16TruncationNamingTheBias",
     "residual_forward_bf16",
     "--variants 1,90 --shapes wide --seed 4 --verbose",
     {1},
     {"INCORRECT residual_forward_bf16 emu/90 planted_truncates", "mean signed error -0.4"}},
    // A bf16 layernorm that accumulates in bf16 (its statistics off, every output with
    // them), and one that rounds an intermediate to bf16 (more than half an ulp in some
    // elements), fail on their outputs.
    {"Bf16AccumulatingInBf16AndRoundingTwice",
     "layernorm_forward_bf16",
     "--variants 1,2,90,91 --seed 4",
     {1, 2},
     {"INCORRECT layernorm_forward_bf16 emu/90 planted_accumulates_in_bf16 block_size=32 at B=2 T=19 C=1024: out: ",
      "INCORRECT layernorm_forward_bf16 emu/91 planted_rounds_twice block_size=32 at B=2 T=19 C=1024: out: "}},
    // A fused residual + layernorm that normalises the fp32 sums instead of the residual
    // it stored fails on normed.
    {"Bf16NormalisingTheUnroundedResidual",
     "fused_residual_layernorm_forward_bf16",
     "--variants 1,2,90 --seed 4",
     {1, 2},
     {"INCORRECT fused_residual_layernorm_forward_bf16 emu/90 planted_normalises_unrounded block_size=32 at B=2 T=19 "
      "C=1024: normed: "}},
    // An AdamW that truncates the bf16 parameters stays within one ulp of the master
    // weights everywhere, and the bias test catches it.
    {"Bf16TruncatingParameters",
     "adamw_bf16",
     "--variants 1,2,90 --seed 4 --verbose",
     {1, 2},
     {"INCORRECT adamw_bf16 emu/90 planted_truncates_params", "params: biased: the mean signed error is -0."}},
    // A bf16 gradient accumulated with two roundings (the sum rounded to bf16, then added
    // to the old value and rounded again) is off by up to an ulp: caught on dbias, while
    // the contract's one rounding passes.
    {"Bf16AccumulatingAGradientWithTwoRoundings",
     "matmul_backward_bias_bf16",
     "--variants 1,2,90 --seed 4",
     {1, 2},
     {"INCORRECT matmul_backward_bias_bf16 emu/90 planted_rounds_twice block_size=32 at B=2 T=19 OC=96: dbias: "}},
    // cuBLAS with a bf16 C may add split sums in bf16 (seen on an H200:
    // matmul_forward_bf16 cuda/2's first form, this one, was up to 0.73 ulp off); the
    // emulator's cuBLAS takes that freedom, so trusting it to round once fails here as it
    // did on the GPU, while the fixed cuda/2 (an fp32 C, rounded by its own kernel) passes.
    {"Bf16TrustingCublasToRoundTheOutputOnce",
     "matmul_forward_bf16",
     "--variants 1,2,90 --seed 4",
     {1, 2},
     {"INCORRECT matmul_forward_bf16 emu/90 planted_bf16_gemm_output"}},
    // A TF32 wmma matmul that adds the bias into its accumulator fragment's x[i] at a
    // guessed layout fails the comparison at two seeds (the emulator draws the layout per
    // run), while cuda/7, whose epilogue goes through store_matrix_sync, passes at both.
    {"WmmaAssumingTheFragmentLayoutSeed1",
     "matmul_forward",
     "--variants 7,90 --shapes tiny,wide --seed 1",
     {7},
     {"INCORRECT matmul_forward emu/90 planted_assumes_fragment_layout block_size=32 at B=2 T=3 C=8 OC=12: out: "}},
    {"WmmaAssumingTheFragmentLayoutSeed2",
     "matmul_forward",
     "--variants 7,90 --shapes tiny,wide --seed 2",
     {7},
     {"INCORRECT matmul_forward emu/90 planted_assumes_fragment_layout block_size=32 at B=2 T=3 C=8 OC=12: out: "}},
    // Triton rungs under the interpreter, through wb's own check: softmax rung 6 with
    // its mask one column too wide (the first padding column joins the row's maximum)
    // and without the rescale of a lane's sum (wrong wherever a row spans several
    // tiles), flash attention rung 5 without the accumulator's rescale; the rungs they
    // were planted in pass beside them.
    {"TritonSoftmaxMaskOneColumnTooWide",
     "softmax_forward",
     "--variants 6,94 --shapes tiny,ragged --defaults --seed 4",
     {6},
     {"INCORRECT softmax_forward emu/94 planted_triton_mask"},
     true},
    {"TritonSoftmaxWithoutTheRescale",
     "softmax_forward",
     "--variants 6,95 --shapes vocab --defaults --seed 4",
     {6},
     {"INCORRECT softmax_forward emu/95 planted_triton_no_rescale"},
     true},
    {"TritonFlashWithoutTheRescale",
     "attention_forward_bf16",
     "--variants 5,90 --shapes flash --defaults --seed 4",
     {5},
     {"INCORRECT attention_forward_bf16 emu/90 planted_triton_flash_no_rescale"},
     true},
};

INSTANTIATE_TEST_SUITE_P(Planted, PlantedFaultIsCaught, ::testing::ValuesIn(kPlantedFaults),
                         [](const ::testing::TestParamInfo<PlantedFault>& fault) { return fault.param.name; });

// The tensor-core controls (tests/planted/tensor_core_faults.cuh): a two-stage cp.async,
// ldmatrix and mma.sync matmul_forward_bf16 (91) passes, and each planted copy of it is
// caught: a transposed A fragment and A's ldmatrix rows one off by the comparison (the
// rows also by the memcheck fault naming lane 15 once a second stage is read), a stage
// read before its wait by the poison it reads (NaNs), the missing barrier between the
// wait and the compute by the schedules that let one warp read before the other's
// copies land (the ThreadSanitizer pass reports it as a race too:
// ci/emu_sanitized.sh thread, scenario mma_missing_barrier), and a stage refilled
// before the barrier that ends the other warp's reads of it by the poison of the
// refill, once a warp runs ahead (at the wide shape: the tiny one has a single k step,
// no refill). tests/emu (TensorCore.ARefillIssuedBeforeTheBarrierShowsWhenWarpsRunAlone)
// shows that the warps-alone run catches it by itself, at every seed.
TEST(PlantedTensorCore, TheMmaPipelinePassesAndEachPlantedBugIsCaught) {
  const std::string out =
      check_fails("matmul_forward_bf16", "--variants 91,92,93,94,95,96 --shapes tiny,wide --seed 3 --isolate", {91});
  const std::string at_tiny = " block_size=64 at B=2 T=3 C=8 OC=12: ";
  const std::string at_wide = " block_size=64 at B=2 T=19 C=1024 OC=96: ";
  EXPECT_TRUE(contains(out, "INCORRECT matmul_forward_bf16 emu/92 planted_swapped_a_fragment" + at_tiny + "out: "))
      << out;
  EXPECT_TRUE(contains(
      out, "INCORRECT matmul_forward_bf16 emu/93 planted_reads_before_wait" + at_tiny + "out: 72 of 72 outside"))
      << out;
  EXPECT_TRUE(contains(out, "72 not finite (first at 0: nan vs ")) << out;
  EXPECT_TRUE(contains(out, "INCORRECT matmul_forward_bf16 emu/94 planted_row_one_off" + at_tiny + "out: ")) << out;
  EXPECT_TRUE(contains(out, "INCORRECT matmul_forward_bf16 emu/94 planted_row_one_off" + at_wide)) << out;
  EXPECT_TRUE(contains(out, "thread (15,0,0): ldmatrix_x4: lane 15's row address ")) << out;
  EXPECT_TRUE(contains(out,
                       "its 16 bytes do not lie inside the block's shared memory at "
                       "tests/planted/tensor_core_faults.cuh:"))
      << out;
  // The missing barrier is caught by the schedules that switch threads at memory
  // accesses, which only the plain build has: the sanitized builds report no accesses
  // (their ThreadSanitizer pass reports the race instead).
  if (emu::reports_accesses()) {
    EXPECT_TRUE(contains(out, "INCORRECT matmul_forward_bf16 emu/95 planted_missing_barrier" + at_wide)) << out;
  }
  EXPECT_TRUE(contains(out, "INCORRECT matmul_forward_bf16 emu/96 planted_refill_before_barrier" + at_wide)) << out;
  EXPECT_TRUE(contains(out, "not finite")) << out;
}

// An epilogue that guards each pair of output columns by its first column only writes
// one past the row when OC is odd: the only odd OC of the check shapes that a C % 8
// rung runs is the ragged shape's (the odd shape's C = 75 skips it), where the last
// row's last pair writes past the end of out. Passes at the even-OC shapes.
TEST(PlantedTensorCore, AnEpilogueWithoutItsOddColumnGuardIsCaughtAtTheRaggedShape) {
  if (std::string(emu::flavour()) != "plain")
    GTEST_SKIP() << "the canary after the output is the plain build's; AddressSanitizer stops at the write itself";
  const std::string out =
      check_fails("matmul_forward_bf16", "--variants 91,97 --shapes tiny,wide,ragged,ragged8 --seed 3 --isolate", {91});
  EXPECT_TRUE(contains(out,
                       "INCORRECT matmul_forward_bf16 emu/97 planted_no_odd_column_guard block_size=64 at B=3 T=43 "
                       "C=168 OC=221: "))
      << out;
  EXPECT_TRUE(contains(out, "wrote past the end of a device buffer")) << out;
  EXPECT_TRUE(contains(out, "kernel mma_matmul_bf16<")) << "the kernel by its function's name: " << out;
  EXPECT_TRUE(contains(out, "(matmul_forward_bf16 emu/97 block_size=64)")) << "and the variant: " << out;
  for (const char* even : {"T=3 C=8 OC=12", "T=19 C=1024 OC=96", "T=17 C=136 OC=136"})
    EXPECT_FALSE(contains(out, "emu/97 planted_no_odd_column_guard block_size=64 at B=2 " + std::string(even)) ||
                 contains(out, "emu/97 planted_no_odd_column_guard block_size=64 at B=1 " + std::string(even)))
        << even << ": " << out;
}

// The forward faults of a FlashAttention-2 kernel (attention_forward_bf16 cuda/4's, at
// 32 x 16 tiles and two stages): its correct copy (91) passes, and each planted one is
// caught. Skipping the tile that holds a warp's diagonal leaves the first rows without
// weights (NaNs at tiny); a missing rescale and a misplaced P fragment show once rows
// span several key tiles, at the ragged shape (at tiny the misplaced registers meet only
// zero-filled V rows); a tile read before its wait reads the emulator's poison.
TEST(PlantedFlashAttention, TheForwardPassesAndEachPlantedBugIsCaught) {
  const std::string out =
      check_fails("attention_forward_bf16", "--variants 91,92,93,94,95 --shapes tiny,ragged --seed 3 --isolate", {91});
  const std::string at_tiny = " block_size=64 at B=2 T=3 C=8 NH=2: out: ";
  const std::string at_ragged = " block_size=64 at B=3 T=43 C=168 NH=3: out: ";
  EXPECT_TRUE(contains(
      out, "INCORRECT attention_forward_bf16 emu/92 planted_diagonal_tile_skipped" + at_tiny + "48 of 48 outside"))
      << out;
  EXPECT_TRUE(contains(out, "INCORRECT attention_forward_bf16 emu/93 planted_no_rescale" + at_ragged)) << out;
  EXPECT_TRUE(contains(out, "INCORRECT attention_forward_bf16 emu/94 planted_p_fragment_misplaced" + at_ragged)) << out;
  EXPECT_TRUE(
      contains(out, "INCORRECT attention_forward_bf16 emu/95 planted_reads_before_wait" + at_tiny + "48 of 48 outside"))
      << out;
  EXPECT_TRUE(contains(out, "48 not finite (first at 0: nan vs ")) << out;
}

// The emulator's cuDNN SDPA (device/cuda/cudnn_sdpa_emu.cpp) checks every tensor of a
// call against device memory before it computes: cuda/3's call with O one row past out
// is a memcheck fault naming O, beside cuda/3 itself, which passes.
TEST(PlantedCudnnSdpa, AnOutputViewPastItsBufferIsAMemcheckFault) {
  const std::string out = check_fails("attention_forward_bf16", "--variants 3,97 --shapes ragged --seed 3 --isolate", {3});
  EXPECT_TRUE(contains(out, "memcheck: cuDNN SDPA forward (emulated): O reaches outside device memory")) << out;
  EXPECT_TRUE(contains(out, "emu/97 planted_sdpa_out_one_row_on")) << out;
}

// It checks the 16-byte alignment the graph declares of every tensor as well: Stats
// placed 4 bytes into the workspace lies in device memory but breaks it, a
// misaligned-address fault naming Stats.
TEST(PlantedCudnnSdpa, AStatsViewOffItsDeclaredAlignmentIsAFault) {
  const std::string out = check_fails("attention_forward_bf16", "--variants 3,98 --shapes ragged --seed 3 --isolate", {3});
  EXPECT_TRUE(contains(
      out, "memcheck: cuDNN SDPA forward (emulated): Stats (lse) is not 16-byte aligned, as the graph declares it"))
      << out;
  EXPECT_TRUE(contains(out, "emu/98 planted_sdpa_stats_misaligned")) << out;
}

// A refill issued before the barrier that ends the other warps' reads of its buffer, at
// cuda/4's default launch (query_tile 64, key_tile 64, two stages): caught where the
// launch refills (the flash shape, T = 200: the last query tile streams four key tiles),
// already in the first run, whose warps run one after another to each barrier: the
// first warp's refill poisons the buffer the next still reads (NaNs in the last query
// tile's rows, from row 192); at the ragged shape (T = 43: one key tile, nothing
// refilled) the same kernel passes, which is why CI's emulated check has the flash shape
// (issue 52).
TEST(PlantedFlashAttention, ARefillBeforeItsBarrierIsCaughtWhereTheDefaultLaunchRefills) {
  const std::string out =
      check_fails("attention_forward_bf16", "--variants 91,96 --shapes ragged,flash --seed 3 --isolate", {91});
  EXPECT_TRUE(contains(out,
                       "INCORRECT attention_forward_bf16 emu/96 planted_refill_before_barrier block_size=128 at B=1 "
                       "T=200 C=64 NH=1: "))
      << out;
  EXPECT_FALSE(contains(out, "emu/96 planted_refill_before_barrier block_size=128 at B=3 T=43")) << out;
  EXPECT_TRUE(contains(out, "not finite")) << "the poison of the early refill: " << out;
  EXPECT_TRUE(contains(out, "rows of 64 off by more than")) << "the rows of the last query tile: " << out;
}

// The backward faults of attention_backward_bf16 cuda/3's FlashAttention-2 kernels (at
// key_tile 32 and query_tile 16): the correct copy (91) passes in both dq forms, and each
// planted one is caught. Starting the dk/dv blocks one query tile late skips the tile
// that holds their diagonal: at tiny (one tile) dK and dV stay zero, at ragged the keys
// lose their own rows; a query stage read before its cp.async wait reads the emulator's
// poison (NaNs). The third fault, dQ added into the fp32 accumulator without atomicAdd
// (92), races across blocks only (each element of a block's dQ tile has one adding
// thread, after a __syncthreads): the plain build's interleaving pass reports it as a
// racecheck fault at the ragged shape, where a row's dQ gets two key tiles' additions
// (at tiny one key tile covers T = 3: no race, and it passes). The sanitized builds
// report no plain accesses: there ThreadSanitizer reports the race instead.
TEST(PlantedFlashAttentionBackward, TheBackwardPassesAndEachPlantedBugIsCaught) {
  const std::string out =
      check_fails("attention_backward_bf16", "--variants 91,92,93,94 --shapes tiny,ragged --seed 3 --isolate", {91});
  EXPECT_TRUE(contains(out, "emu/91 planted_flash_mma_backward           B=2 T=3 C=8 NH=2     2 ok")) << out;
  EXPECT_TRUE(contains(out, "emu/91 planted_flash_mma_backward           B=3 T=43 C=168 NH=3  2 ok")) << out;
  for (const char* form : {"dq_atomics=0", "dq_atomics=1"}) {
    const std::string at_tiny = std::string(" block_size=64,") + form + " at B=2 T=3 C=8 NH=2: dqkv: ";
    const std::string at_ragged = std::string(" block_size=64,") + form + " at B=3 T=43 C=168 NH=3: dqkv: ";
    EXPECT_TRUE(contains(out, "INCORRECT attention_backward_bf16 emu/93 planted_diagonal_query_tile_skipped" + at_tiny))
        << out;
    EXPECT_TRUE(
        contains(out, "INCORRECT attention_backward_bf16 emu/93 planted_diagonal_query_tile_skipped" + at_ragged))
        << out;
    EXPECT_TRUE(contains(out, "INCORRECT attention_backward_bf16 emu/94 planted_backward_reads_before_wait" + at_tiny +
                                  "144 of 144 outside"))
        << out;
    EXPECT_TRUE(contains(out, "INCORRECT attention_backward_bf16 emu/94 planted_backward_reads_before_wait" +
                                  at_ragged + "65016 of 65016 outside"))
        << out;
  }
  EXPECT_TRUE(contains(out, "144 not finite (first at 0: nan vs ")) << out;
  if (emu::reports_accesses()) {
    EXPECT_TRUE(contains(out,
                         "INCORRECT attention_backward_bf16 emu/92 planted_dq_without_atomics block_size=64,"
                         "dq_atomics=1 at B=3 T=43 C=168 NH=3: "))
        << out;
    EXPECT_TRUE(contains(out,
                         "(emulator racecheck: kernel flash_dk_dv<32, 16, true, 1> (attention_backward_bf16 "
                         "emu/92 block_size=64,dq_atomics=1), block ("))
        << out;
    EXPECT_TRUE(contains(out,
                         "in cuda::flash_attention_backward_mma::flash_dk_dv<32, 16, true, 1> at "
                         "variants/attention/flash_attention_backward_mma.cuh:"))
        << out;
    EXPECT_TRUE(contains(out, "'s plain write of the same byte, in ")) << out;
    EXPECT_TRUE(contains(out, "emu/92 planted_dq_without_atomics           B=2 T=3 C=8 NH=2     1 ok"))
        << "one key tile at tiny: no two blocks add to a row" << out;
  }
}

// A fault confined to small rows: 95 zeroes dQ for the rows of the dq kernel's last
// query tile (rows 32..42 of each sequence at the ragged shape, T = 43: two query tiles
// of 32). Late queries' dQ are small (their softmax spreads over many keys): the
// elementwise test, whose atol is sized for the largest gradients, sees only a few of
// the zeroed elements (11 of 65016 outside at this seed, 9 to 23 at seeds 1-12), while
// the row test, holding each q row to its own norm (docs/precision.md), fails every
// zeroed row with a relative error of 1: 33 rows (11 in each of the 3 sequences), the
// first token 32's q row, row 3 * 32 = 96 (rows of C = 168: q, k and v per token).
TEST(PlantedFlashAttentionBackward, ALastQueryTileWithoutDqFailsTheRowTest) {
  const std::string out = check_fails("attention_backward_bf16", "--variants 95 --shapes ragged --seed 3", {});
  EXPECT_TRUE(contains(out,
                       "INCORRECT attention_backward_bf16 emu/95 planted_last_query_tile_dq_zeroed block_size=64,"
                       "dq_atomics=0 at B=3 T=43 C=168 NH=3: dqkv: "))
      << out;
  EXPECT_TRUE(contains(out,
                       "; 33 of 384 rows of 168 off by more than 6.2e-02 of their norm (first: row 96, relative "
                       "error 1)"))
      << out;
}

}  // namespace
}  // namespace wb
