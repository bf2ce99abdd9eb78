#pragma once
// The field's table (wb table, docs/torch.md): for each (op, shape) of one device's
// reports, the fastest correct, timed configuration of each kind of rung -- PyTorch
// eager, torch.compile, the best hand-written rung (CUDA C++ or C++), the best Triton
// rung, the best library rung (cuBLAS, cuBLASLt, cuDNN, OpenBLAS, oneDNN) -- so that a
// new kernel is judged against what PyTorch already gives, on the user's own device.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "workbench/runtime/report.h"

namespace wb::cli {

enum class RungKind { torch_eager, torch_compile, hand_written, triton, library };
constexpr std::size_t kRungKinds = 5;
const char* heading(RungKind k);  // "PyTorch eager", ...

// A record's kind, from its file and name (a library rung's name names its library).
RungKind rung_kind(const Record& r);

struct TableCell {
  const Record* best = nullptr;  // the fastest correct, timed record; null when none
  std::size_t records = 0;       // the kind's records at this (op, shape), whatever their status
  std::string why_none;          // with records but no best: the first one's status and reason
};

struct TableRow {
  std::string op;
  std::string shape;
  std::array<TableCell, kRungKinds> cells;
};

// The rows, in the order the (op, shape) pairs first appear; only records of the full
// op count (not the pass with the optional tensors left out). Throws UsageError when the
// reports are of several devices (one table per device) or hold no timed record.
std::vector<TableRow> table_rows(const std::vector<std::pair<std::string, Report>>& reports);

// The table as Markdown: the device, the reports and how it was made, then a row per
// (op, shape), each cell the median and its configuration, and which kind is fastest,
// against PyTorch eager where it ran.
std::string table_markdown(const std::vector<TableRow>& rows,
                           const std::vector<std::pair<std::string, Report>>& reports, const std::string& command);

}  // namespace wb::cli
