#pragma once
// Every op of one GPT-2 fp32 training step, in the order a step runs them.
#include <vector>

#include "contract/op.h"

namespace wb {

const std::vector<const OpSpec*>& all_ops();

}  // namespace wb
