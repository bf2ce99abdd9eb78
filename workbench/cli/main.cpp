#include "workbench/cli/commands.h"

int main(int argc, char** argv) { return wb::cli::main(argc, argv); }
