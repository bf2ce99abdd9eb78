// Test-only Triton rungs with planted faults (tests/triton/planted/, docs/triton.md),
// registered on the emu backend beside the build's own rungs: `wb check --backend emu`
// runs them under Triton's interpreter through the same client as every Triton rung
// (device/triton/interpreter.h), so that the emulated check, not only the interpreter
// test, is shown to call them INCORRECT. Their ids (9x) keep them apart from the ladder;
// their files keep the helper's ids (07, 08, 06), which no registry reads.
#include "contract/ops/attention_forward.h"
#include "contract/ops/softmax_forward.h"
#include "device/triton/interpreter.h"
#include "tests/planted/planted.h"

namespace wb {
namespace {

template <const char* kRung>
void softmax_rung(const SoftmaxForwardArgs& a, const Launch& launch) {
  triton::InterpretedCall call(kRung, launch);
  call.pointer("probs", "*fp32", a.probs);
  call.pointer("logits", "*fp32", a.logits);
  call.integer("B", a.B);
  call.integer("T", a.T);
  call.integer("V", a.V);
  call.integer("Vp", a.Vp);
  call.run();
}

template <const char* kRung>
void attention_rung(const AttentionForwardBf16Args& a, const Launch& launch) {
  triton::InterpretedCall call(kRung, launch);
  call.pointer("out", "*bf16", a.out);
  call.pointer("lse", "*fp32", a.lse);
  call.pointer("qkv", "*bf16", a.qkv);
  call.integer("B", a.B);
  call.integer("T", a.T);
  call.integer("C", a.C);
  call.integer("NH", a.NH);
  call.run();
}

constexpr char kMaskOffByOne[] = "tests/triton/planted/softmax_forward/07_triton_mask_off_by_one.py";
constexpr char kNoRescale[] = "tests/triton/planted/softmax_forward/08_triton_no_rescale.py";
constexpr char kFlashNoRescale[] = "tests/triton/planted/attention_forward_bf16/06_triton_no_rescale.py";

Variant planted(Variant v, const char* op, int id, const char* name, const char* source, const char* summary) {
  v.op = op;
  v.backend = Backend::emu;
  v.id = id;
  v.name = name;
  v.source = source;  // a .py file: is_triton_rung
  v.summary = summary;
  return v;
}

}  // namespace
}  // namespace wb

std::vector<wb::Variant> planted_triton_variants() {
  using namespace wb;
  const std::vector<TuningParam> softmax = {
      {"block_v", {256, 1024, 4096}, 1024}, {"num_warps", {4, 8}, 4}, {"num_stages", {1}, 1}};
  Variant mask = planted(Variant::of(&softmax_rung<kMaskOffByOne>), "softmax_forward", 94, "planted_triton_mask",
                         kMaskOffByOne, "test only: Triton rung 6 with its mask one column too wide");
  mask.params = softmax;
  Variant rescale = planted(Variant::of(&softmax_rung<kNoRescale>), "softmax_forward", 95,
                            "planted_triton_no_rescale", kNoRescale,
                            "test only: Triton rung 6 without the rescale of a lane's sum when its maximum grows");
  rescale.params = softmax;
  Variant flash = planted(Variant::of(&attention_rung<kFlashNoRescale>), "attention_forward_bf16", 90,
                          "planted_triton_flash_no_rescale", kFlashNoRescale,
                          "test only: Triton rung 5 without the accumulator's rescale");
  flash.numeric = NumericClass::bf16;
  flash.params = {{"block_m", {64, 128}, 64}, {"block_n", {32, 64}, 64}, {"num_warps", {4, 8}, 4},
                  {"num_stages", {2, 3}, 2}};
  flash.requirements.push_back({"C // NH <= 64", [](const Shape& s) { return s.C / s.NH <= 64; }});
  return {mask, rescale, flash};
}
