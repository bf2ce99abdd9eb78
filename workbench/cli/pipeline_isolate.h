#pragma once
// --isolate, written once: records measured in a child process, a fresh exec of this
// same program (a CUDA context does not survive fork, and a faulted one is lost until
// its process ends). The child runs the ordinary command narrowed to what it is asked
// for and writes its report to a temporary file; the parent reads the records back. A
// child that dies by a signal, or ends without a report, costs the configurations it
// was given: they come back incorrect with the reason. A device the child's variant
// lost is the child's: its records say so (incorrect, then not run), the parent's
// device is untouched.
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

struct ChildRecords {
  std::vector<Record> records;           // one per wanted record, in its order
  std::optional<ReportContext> context;  // the child's, when it wrote a report
};

// Runs this program with `args` (argv[1..]: a command told to write its report to
// `report_path`) in a child process whose stdout is discarded and whose stderr is kept
// for the failure message, waits for it, reads its report (against registry()), and
// returns for each of `wanted` (a record with its identity filled in: op, variant,
// launch parameters, shape, seed, omitted tensors) the child's record of that
// configuration, or `wanted` itself, incorrect with the reason: the child's death by a
// signal, its exit without a report and its last words, or a report without it. Exit 0
// or 1 with a report is a finished child (1: a check failed, or its device was lost).
ChildRecords records_from_child(const std::vector<std::string>& args, const std::string& report_path,
                                std::vector<Record> wanted, IsolationDir& dir);

}  // namespace wb::cli
