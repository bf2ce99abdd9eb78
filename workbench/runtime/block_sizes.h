#pragma once
// --block-sizes: the one rule by which wb check and wb sweep narrow their plans (and
// the coverage test reads CI's sanitized passes). A list narrows the block_size axis
// only; it does not concern a variant's other axes.
#include <optional>
#include <vector>

#include "contract/variant.h"

namespace wb {

// The configurations of `v` a run narrowed to `sizes` makes (all of them without a
// list): those whose block size is listed; all of a variant that takes no block size;
// those at its default block size for a variant none of whose block sizes is listed, so
// that a narrowed run still reaches every variant (its records say which block size ran).
// `defaults` (wb check --defaults) also holds every other launch parameter at the
// variant's default, leaving the block size the one axis that varies.
std::vector<ParamValues> configurations_at(const Variant& v, const std::optional<std::vector<int>>& sizes,
                                           bool defaults = false);

// Throws UsageError unless some variant of `selected` takes a block size and each of
// `sizes` is legal for one of them: a size no variant takes is a typo, not a narrowing.
void check_block_sizes(const std::vector<int>& sizes, const std::vector<const Variant*>& selected);

}  // namespace wb
