#pragma once
// The generated table of variants (build/.../registry_table.cpp, written by
// cmake/GenerateRegistry.cmake from the files under variants/ and reference/). Each
// variant file defines `wb::Variant wb::variants::<op>_<backend>_<id>()`; each
// reference file `std::vector<wb::Variant> wb::references::<stem>()`.
#include <vector>

#include "contract/variant.h"

namespace wb {

struct VariantFactory {
  Variant (*make)();
  const char* source;  // relative to the repository
};

// One reference file and the CPU references (variant 1 of their ops) it holds.
struct ReferenceFactory {
  std::vector<Variant> (*make)();
  const char* source;  // relative to the repository
};

struct SourceHash {
  const char* path;
  const char* sha256;  // the identity
};

const std::vector<VariantFactory>& variant_factories();
// Every CUDA variant file compiled for the emulator (emu_registry_table.cpp, whose
// declarations sit in the emulator's namespace; emu/shim.h).
const std::vector<VariantFactory>& emu_variant_factories();
const std::vector<ReferenceFactory>& reference_factories();
// The Triton rungs (variants/<op>/NN_triton_name.py) this build left out, and why (no
// Python venv when it was configured, docs/triton.md): `wb list` names them. Empty
// when every rung is built.
struct SkippedRung {
  const char* source;  // relative to the repository
  const char* why;
};
const std::vector<SkippedRung>& skipped_triton_rungs();

// The PyTorch rungs' files, variants/<op>/torch.py (docs/torch.md), as the configure step
// read them (contract/CMakeLists.txt): each is two rungs of its op per backend.
struct TorchRungFile {
  const char* op;
  const char* source;    // relative to the repository
  const char* summary;   // its docstring's first line
  const char* identity;  // SHA-256 of the file and the pinned torch version
};
const std::vector<TorchRungFile>& torch_rung_files();
// The identity of every variant and reference file (base/source_identity.h), taken
// when the build wrote the table (source_identities.cpp, by wb_identity).
const std::vector<SourceHash>& source_hashes();

}  // namespace wb
