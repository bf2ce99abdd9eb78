#pragma once
// The trainer: its command line and its phases, run in order (main.cpp runs main).
#include "contract/registry.h"
#include "trainer/options.h"

namespace wb::trainer {

// Runs the trainer's phases in order: options, model source, data, kernel plan (built
// once), log, step loop, summary. Throws on failure (main maps it to an exit code).
int run(const Options& o, const Registry& registry);
int main(int argc, char** argv);

}  // namespace wb::trainer
