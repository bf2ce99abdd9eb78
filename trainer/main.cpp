#include "trainer/trainer.h"

int main(int argc, char** argv) { return wb::trainer::main(argc, argv); }
