#pragma once
// What several commands print: a progress line on stderr while a long command works
// (rewritten in place on a terminal, one line per step otherwise), and times and errors
// in the tables.
#include <ostream>
#include <string>

#include "workbench/runtime/record.h"

namespace wb {

class Progress {
 public:
  explicit Progress(std::size_t total);
  ~Progress();
  void step(const std::string& what);

 private:
  std::size_t total_, done_ = 0;
  bool tty_;
};

}  // namespace wb

namespace wb::cli {

std::string format_time(double seconds);     // "12.3 us", "4.56 ms"
std::string format_errors(const Record& r);  // worst max abs error over the checked tensors
std::string format_deterministic(const Record& r);

// A configuration's counters in one line ("global 4.0 sectors/request (ideal 4.0),
// shared 1.00 wavefronts/request (ideal 1.00), 32.0 active lanes/request; occupancy
// sm_80 100%, sm_90 100%"), with what was sampled or not counted, and why occupancy was
// not computed where it was not ("occupancy: not computed (no resource table: this
// build had no nvcc)").
// With the op's byte model at the shape (model_bytes > 0), also the global sectors'
// bytes against it ("1.02x the byte model": L1 sectors, not DRAM traffic).
std::string format_counters(const Counters& c, double model_bytes = 0);
// "COUNTERS <where>: <format_counters>", then the worst sites, one per line
// ("  variants/op/NN_name.cu:57 shared load 4-way conflict (...)").
void print_counters(std::ostream& out, const std::string& where, const Counters& c, double model_bytes,
                    std::size_t worst = 3);

}  // namespace wb::cli
