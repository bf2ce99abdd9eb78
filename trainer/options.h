#pragma once
// The trainer's options: their values, the command line that sets them, the checks
// they get before any work, and the learning-rate schedule they describe.
#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace wb::trainer {

// AdamW's constants: the same at every step of a run (the learning rate is the
// schedule's, step by step). The defaults are the trainer's.
struct AdamwConstants {
  float weight_decay = 0.0f;
  float grad_clip = 1.0f;  // the largest global gradient norm; 0 = no clipping
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};

struct Options {
  std::string backend;                  // "" = cuda when usable, else cpu
  std::string kernels;                  // best.json
  bool strict_device = false;           // refuse best.json without a section for this device
  bool deterministic = false;           // only bitwise-repeatable variants
  std::string precision = "fp32";       // fp32 | tf32 | bf16
  std::string rounding = "stochastic";  // bf16: how the updated master weights become the bf16 parameters
  std::string model;                    // llm.c checkpoint
  std::string init;                     // d12 | L,C,NH
  std::string train, val;               // llm.c token files
  int batch = 4, seq_len = 64, steps = 10;
  float lr = 3e-4f;
  AdamwConstants adamw;
  int warmup = 0;
  std::string schedule = "const";  // const | cosine
  float final_lr_frac = 0.0f;
  int val_every = 0, val_batches = 20;
  uint64_t seed = 1337;
  bool shuffle = false;
  std::string save, log;
  double peak_tflops = 0;  // 0: measure the device's GEMM ceiling
  std::string dump_workloads, debug_state;
  bool op_times = false;    // print where the op time of a step went, per op call site, after the run
  std::string cuda_graph;   // on | off; "" = on on cuda, off elsewhere
  bool print_plan = false;  // print the kernel plan (and unused best.json entries), then stop
  std::string tokenizer;    // llm.c gpt2_tokenizer.bin, for samples
  int sample_every = 0, sample_len = 64;
  std::string state;         // write the training state here (every checkpoint_every steps and at the end)
  int checkpoint_every = 0;  // 0: the state only at the end
  std::string resume;        // continue from this state file
};

// Adds every option to the command line, in the order --help lists them.
void add_options(CLI::App& app, Options& o);

// The options that need no file and no model, checked before any work (UsageError
// naming the flag).
void validate_options(const Options& o);

// The learning rate of a step (from 1): linear warm-up, then constant or a cosine decay
// to lr * final_lr_frac at the last step.
float learning_rate(const Options& o, int step);

}  // namespace wb::trainer
