#pragma once
// The registry: every op of the catalogue and every variant of every op, registered
// once. `wb` and the trainer read the same one. Variants come from an explicit table
// that the build generates from the files under variants/ (registry_table.h), so no
// variant can be dropped by the linker; CPU variant 1 of every op is its reference,
// registered from reference/ through the same generated table.
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "contract/op.h"
#include "contract/variant.h"

namespace wb {

class Registry {
 public:
  // The catalogue with every variant of this build.
  static const Registry& global();

  // An empty registry over the given ops (tests build their own).
  explicit Registry(std::vector<const OpSpec*> ops);

  // Adds a variant after checking it against its op; throws VariantFileError
  // (contract/variant_errors.h: bad input, naming the file and the fix) on a duplicate
  // id, an unknown op, an argument struct of another op, or malformed launch parameters.
  void add(Variant v);

  // The lowest id above op's on backend b, registered or a file of this build (1: none).
  int next_free_id(std::string_view op, Backend b) const;

  const std::vector<const OpSpec*>& ops() const { return ops_; }
  const OpSpec* find_op(std::string_view name) const;
  const OpSpec& op(std::string_view name) const;  // throws UsageError naming the ops

  // Sorted by backend, then id.
  std::vector<const Variant*> variants(std::string_view op) const;
  std::vector<const Variant*> variants(std::string_view op, Backend b) const;
  const Variant* find(std::string_view op, Backend b, int id) const;
  const Variant& variant(std::string_view op, Backend b, int id) const;  // throws UsageError naming the ids

  // CPU variant 1 of an op: its reference, the ground truth.
  const Variant& reference(std::string_view op) const;
  // Runs op's reference on host tensors (pointers in the order of op.tensors).
  void run_reference(const OpSpec& op, const Shape& shape, std::vector<void*> tensors) const;

 private:
  std::vector<const OpSpec*> ops_;
  std::deque<Variant> variants_;
};

// What the path of a variant's file says of it, "variants/<op>/NN_name.cu" or
// "variants/<op>/cpu_NN_name.cpp": its op, backend, id and name. The registry fills
// these in for the variant (its file only states what is its own) and refuses a
// variant whose factory says otherwise.
struct VariantFile {
  std::string op;
  Backend backend;
  int id;
  std::string name;
};
VariantFile parse_variant_file(std::string_view path);  // throws std::logic_error

// Whether v is a Triton rung (variants/<op>/NN_triton_name.py, docs/triton.md): on cuda
// it runs its compiled cubins, on emu it runs under Triton's interpreter, which is for
// checks: no op's default, and never the trainer's on emu.
bool is_triton_rung(const Variant& v);

// The PyTorch rungs of an op (variants/<op>/torch.py, docs/torch.md): the op as a
// PyTorch user writes it, run by PyTorch in a process of its own (workbench/runtime/
// torch_rung.h), on cpu and, with nvcc, cuda: eager as id 80, through torch.compile as
// id 81, in every op's ladder alike. They need Python at run time: never an op's
// default, never the trainer's, and their run function refuses an argument struct.
constexpr int kTorchEagerId = 80;
constexpr int kTorchCompileId = 81;
bool is_torch_rung(const Variant& v);
bool is_torch_rung_file(std::string_view source);  // "variants/<op>/torch.py"
struct TorchRungFile;                              // contract/registry_table.h
// The eager (or compiled) PyTorch rung of `op` on backend b from its file.
Variant torch_rung_variant(const OpSpec& op, const TorchRungFile& file, Backend b, bool compiled);

// A variant made by the factory of its file as the registry registers it (on backend
// b: the path's, or emu for the emulator's build of a CUDA file): what the path says
// filled in, or checked where the factory states it too; its launcher, launch limit,
// workspace and determinism claim report a launch parameter they read and the factory
// never declared as the file's mistake (VariantFileError, contract/variant_errors.h).
Variant variant_from_file(Variant (*make)(), const std::string& source, Backend b);

}  // namespace wb
