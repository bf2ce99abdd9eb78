// wb with the planted variants of tests/planted/ in its registry: what the tests of
// the device-lost path and of --isolate run (a child of --isolate is this program
// again, so it knows them too).
#include "tests/planted/planted.h"
#include "workbench/cli/commands.h"

int main(int argc, char** argv) { return wb::cli::main(argc, argv, wb::testing::planted_registry()); }
