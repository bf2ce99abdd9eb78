// The record's own helpers, apart from the harness that fills records, so that the
// report reader links without the executors.
#include "workbench/runtime/record.h"

#include "kernels/errors.h"

namespace wb {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::ok:
      return "ok";
    case Status::incorrect:
      return "incorrect";
    case Status::skipped:
      return "skipped";
    case Status::not_emulated:
      return "not_emulated";
    case Status::not_run:
      return "not_run";
  }
  return "?";
}

Status parse_status(std::string_view s) {
  if (s == "ok") return Status::ok;
  if (s == "incorrect") return Status::incorrect;
  if (s == "skipped") return Status::skipped;
  if (s == "not_emulated") return Status::not_emulated;
  if (s == "not_run") return Status::not_run;
  throw UsageError("unknown status '" + std::string(s) + "' (legal: ok, incorrect, skipped, not_emulated, not_run)");
}

std::string shape_with_omitted(std::string shape, const std::vector<std::string>& omitted) {
  for (std::size_t i = 0; i < omitted.size(); ++i) shape += (i == 0 ? " without " : ", ") + omitted[i];
  return shape;
}

std::string Record::variant_label() const {
  return std::string(to_string(backend)) + "/" + std::to_string(variant) + " " + variant_name;
}

}  // namespace wb
