#pragma once
// The generated table of variants (build/.../registry_table.cpp, written by
// cmake/GenerateRegistry.cmake from the files under variants/). Each variant file
// defines `wb::Variant wb::variants::<op>_<backend>_<id>()`.
#include <vector>

#include "kernels/variant.h"

namespace wb {

struct VariantFactory {
  Variant (*make)();
  const char* source;  // relative to the repository
};

struct SourceHash {
  const char* path;
  const char* sha256;
};

const std::vector<VariantFactory>& variant_factories();
// Hashes of every variant and reference file, taken when the table was generated.
const std::vector<SourceHash>& source_hashes();

}  // namespace wb
