#pragma once
// Verification status of a variant: whether a committed report under results/ holds
// it correct with the source it has now (reports record each variant's source hash).
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/variant.h"

namespace wb {

struct Verification {
  enum class State { verified, changed, never };
  State state = State::never;
  std::string device;  // where it was last found correct
  std::string date;    // YYYY-MM-DD of that report
  std::string text()
      const;  // "verified on NVIDIA H100 2026-11-21", "changed since verified", "not yet run on a device"
};

class VerificationIndex {
 public:
  // Reads every wb.report file below `results_dir`; files that are not reports are
  // passed over, malformed ones noted in warnings().
  static VerificationIndex scan(const std::string& results_dir);

  Verification status(const Variant& v) const;
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Seen {
    std::string hash, device, date;
  };
  std::map<std::tuple<std::string, Backend, int>, std::vector<Seen>> correct_;
  std::vector<std::string> warnings_;
};

}  // namespace wb
