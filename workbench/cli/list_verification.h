#pragma once
// What the committed reports under results/ say about a CUDA variant with the code it
// has now (reports record each variant's identity, base/source_identity.h; reports older
// than identities are re-keyed by a wb.rekey file beside them, tools/rekey.py):
//   on a device  "verified on <device> <date>" when a device's report holds it correct
//                at that hash and no record of that hash is incorrect; "incorrect on
//                <device> <date>" when one is; "changed since verified"; "not yet run
//                on a device";
//   in emulation from the emu reports (results/emu/): "passes", "fails", "not emulated:
//                <why>", "changed since emulated", "not emulated yet".
// The two are kept apart: passing in emulation is never "verified".
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "contract/variant.h"

namespace wb {

inline constexpr const char* kRekeySchema = "wb.rekey/1";

struct Verification {
  enum class State { verified, incorrect, changed, never };
  State state = State::never;
  std::string device;  // where it was last found correct (or incorrect)
  std::string date;    // YYYY-MM-DD of that report
  std::string text() const;
};

struct Emulation {
  enum class State { passes, fails, skipped, not_emulated, changed, never };
  State state = State::never;
  std::string reason;  // why it fails, is skipped or is not emulated
  std::string date;
  std::string text() const;  // "passes (2026-11-23)", "not emulated: needs cuDNN", ...
};

class VerificationIndex {
 public:
  // Reads every wb.report and wb.rekey file below `results_dir`; files that are neither
  // are passed over, malformed ones noted in warnings().
  static VerificationIndex scan(const std::string& results_dir);

  Verification status(const Variant& v) const;  // on a device (cuda records)
  Emulation emulation(const Variant& v) const;  // in emulation (emu records)
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Seen {
    std::string hash, device, date, status, reason;
  };
  // (op, id) -> records of cuda and of emu
  std::map<std::tuple<std::string, int>, std::vector<Seen>> device_, emulated_;
  std::vector<std::string> warnings_;
};

}  // namespace wb
