// The record's own helpers, apart from the harness that fills records, so that the
// report reader links without the executors.
#include "workbench/runtime/record.h"

#include "base/enum_names.h"

namespace wb {

namespace {

constexpr EnumNames<Status, 5> kStatuses = {{Status::ok, "ok"},
                                            {Status::incorrect, "incorrect"},
                                            {Status::skipped, "skipped"},
                                            {Status::not_emulated, "not_emulated"},
                                            {Status::not_run, "not_run"}};

}  // namespace

std::string_view to_string(Status s) { return name_in(kStatuses, s); }

Status parse_status(std::string_view s) { return parse_name(kStatuses, s, "status"); }

std::string shape_with_omitted(std::string shape, const std::vector<std::string>& omitted) {
  for (std::size_t i = 0; i < omitted.size(); ++i) shape += (i == 0 ? " without " : ", ") + omitted[i];
  return shape;
}

std::string Record::variant_label() const {
  return std::string(to_string(backend)) + "/" + std::to_string(variant) + " " + variant_name;
}

}  // namespace wb
