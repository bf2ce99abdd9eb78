#pragma once
// Resuming a run (--resume): the training state read and checked against the options
// and the model given, before any work; and the options a state records.
#include <optional>

#include "trainer/options.h"
#include "trainer/state.h"

namespace wb::trainer {

// The options a state file records (state.h): those that shape every later step.
StateSettings settings_of(const Options& o);

// The state a run resumes from (none without --resume); UsageError naming the flag for
// an option or a model that differs from the run that wrote it.
std::optional<TrainState> resumed_state(const Options& o);

}  // namespace wb::trainer
