#pragma once
// Choosing the best variant per op and shape from reports: `wb best` and best.json
// ("schema": "wb.best/2", documented in docs/formats.md; "wb.best/1", one device per
// file, is still read).
//
// One best.json holds a section per (backend, device slug): what was measured on that
// device, so that one committed file serves a team's CPU runners and GPUs alike.
//
// Among the correct, timed records of an allowed numeric class, each variant's fastest
// launch configuration is its candidate. Candidates are then taken in order of id,
// simplest first: a variant only takes over from the one chosen so far when it is
// faster by more than the noise of both measurements (the sum of their standard
// deviations) and by at least 1%. Otherwise the simpler one stays.
//
// Predicted reports (wb sweep --backend emu --predict-for DEVICE: context.predicted_for)
// are chosen from as the device they predict for, by their predicted times (no noise:
// the fastest wins), among the configurations that passed the emulated check; their
// entries are marked predicted. A measured time always wins: for an (op, shape) that a
// measured report of the device has, the predicted ones are not candidates, and a
// predicted entry never replaces a measured one already in best.json.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workbench/runtime/executor.h"
#include "workbench/runtime/report.h"

namespace wb {

inline constexpr const char* kBestSchema = "wb.best/2";
inline constexpr const char* kBestSchemaV1 = "wb.best/1";
inline constexpr double kMinWinningMargin = 0.01;

// fp32 runs fp32 variants only; tf32 also tf32 ones; bf16 all three.
bool allowed_in(NumericClass variant, NumericClass precision);

// The configuration chosen for its op and shape.
struct BestEntry : Configuration {
  double median_s = 0;
  double stddev_s = 0;
  bool deterministic = true;  // its report saw two runs give bitwise equal outputs
  std::string report;         // the report the winning record came from
  std::string source_hash;    // the variant's identity when it was measured
  std::string note;           // why it won, or which faster variant it was kept over
  bool predicted = false;     // its time was predicted (a predicted report), never measured on the device

  std::string shape_text() const { return describe(shape, dims); }
};

// The choices measured on one device.
struct BestSection {
  std::string created;
  Backend backend = Backend::cpu;
  std::string device_name;
  std::string device_slug;
  std::string architecture;        // "x86_64", "sm_90"; "" when the reports did not say
  std::string compute_capability;  // "9.0" (cuda)
  std::string isa;                 // (cpu) the instruction-set level: "avx2", "avx512bf16"; "" when not recorded
  NumericClass precision = NumericClass::fp32;
  bool deterministic_only = false;  // made with --deterministic
  std::vector<std::string> reports;
  std::vector<BestEntry> entries;  // in the order of first appearance in the reports
  // Records of PyTorch rungs the reports hold: never candidates, since they need Python
  // at run time, which the trainer never runs (wb best says so).
  std::size_t torch_records = 0;
  // Of the predicted reports an entry came from: the prediction model's version and the
  // device description, and whether that device was ever measured ("" when none).
  std::string predicted_model;
  std::string predicted_description;
  bool predicted_device_measured = false;

  std::size_t predicted_entries() const;

  // The entry for op at exactly this shape (its dims), or nullptr.
  const BestEntry* find(const std::string& op, const Shape& shape) const;
  std::string key() const;  // "cuda/nvidia-h100-80gb-hbm3"
};

struct BestFile {
  std::vector<BestSection> sections;  // one per (backend, device slug), in order of addition
  bool from_v1 = false;               // read from a wb.best/1 file

  // Adds s, or merges it into the section of its device: s's entries replace the entries
  // of the same op and shape, the section's other entries stay (a bf16 `wb best` keeps
  // the fp32 ops' choices; a sweep of one op keeps the others'). Returns how many entries
  // of the old section were kept.
  std::size_t merge(BestSection s);
  const BestSection* find(Backend b, const std::string& slug) const;
};

// The device whose times a report holds: its own, or for a predicted report the device
// predicted for (a CUDA device, as its description names it).
DeviceInfo device_of(const Report& report);

// Throws UsageError when the reports come from different devices or backends. With
// deterministic_only, records whose two runs differed bitwise are not candidates.
BestSection choose_best(const std::vector<std::pair<std::string, Report>>& reports, NumericClass precision,
                        bool deterministic_only = false);

// The section a run on device `here` takes: its own, else the closest of the same
// backend (cpu: the same architecture, at the same instruction-set level, else the
// nearest below, else above; cuda: the same compute capability, else the same major),
// since every variant is correct everywhere and only its speed may differ (a rung a CPU
// lacks the instructions for is refused by the plan, which falls back for that call).
// The emulator takes a CUDA section the same way, for the GPU it emulates.
struct SectionChoice {
  const BestSection* section = nullptr;  // nullptr: none fits
  bool exact = false;                    // measured on this very device
  std::string why;                       // how it was chosen, or why none was
};
SectionChoice choose_section(const BestFile& file, const DeviceInfo& here);

nlohmann::json to_json(const BestFile& b);
BestFile best_from_json(const nlohmann::json& j, const std::string& origin);  // throws UsageError
void write_best(const BestFile& b, const std::string& path);                  // atomically
BestFile read_best(const std::string& path);                                  // throws UsageError
BestFile parse_best(std::string_view text, const std::string& origin);        // the same from the file's text

}  // namespace wb
