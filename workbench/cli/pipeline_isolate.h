#pragma once
// --isolate: a command's variants each run in a child process, a fresh exec of this
// same program (a CUDA context does not survive fork, and a faulted one is lost until
// its process ends). The child runs the ordinary command narrowed to one variant and
// writes its report to a temporary file; the parent reads it back. A child that dies
// by a signal, or ends without a report, costs the configurations it was given: they
// come back incorrect with the reason.
#include <optional>
#include <string>
#include <vector>

#include "workbench/runtime/report.h"

namespace wb::cli {

// A temporary folder for the children's reports and error output, removed with it.
class IsolationDir {
 public:
  IsolationDir();  // throws FileError
  ~IsolationDir();
  IsolationDir(const IsolationDir&) = delete;
  IsolationDir& operator=(const IsolationDir&) = delete;
  // A fresh file name in the folder, "<stem>-<n>.json".
  std::string next_file(const std::string& stem);

 private:
  std::string path_;
  int count_ = 0;
};

struct ChildOutcome {
  std::optional<Report> report;  // the child's report, when it wrote one
  std::string failure;           // otherwise why not: "child process died: signal 11 (Segmentation fault)"
};

// Runs this program with `args` (argv[1..]) in a child process whose stdout is
// discarded and whose stderr is kept for the failure message, waits for it, and reads
// the report it was told to write at `report_path` (against registry()). Exit 0 or 1
// with a report is a finished child (1: a check failed, or its device was lost).
ChildOutcome run_child(const std::vector<std::string>& args, const std::string& report_path, IsolationDir& dir);

}  // namespace wb::cli
