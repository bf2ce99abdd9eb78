#pragma once
// Device descriptions: one JSON file per device under results/devices/<slug>.json
// ("schema": "wb.device/1", docs/formats.md), read into the DeviceModel the prediction
// model takes (workbench/runtime/predict.h). A description says what a device offers
// without a report of it: SMs, clock, the ceilings, L2, the SM's limits, the issue rates,
// where each figure comes from, and whether wb ever measured the device. `wb check`, `wb
// run` and `wb sweep` take one with --backend emu --predict-for DEVICE.
#include <string>
#include <string_view>
#include <vector>

#include "workbench/runtime/predict.h"

namespace wb {

inline constexpr const char* kDeviceSchema = "wb.device/1";

struct DeviceDescription {
  DeviceModel model;
  std::string compute_capability;  // "9.0", as reports write it
  std::string slug;                // of the name, as a report of this device would have it
  std::string path;                // the file it was read from
};

// The description in `text`; throws UsageError naming `origin` and the field at fault
// (missing, of the wrong type, out of range, or unknown).
DeviceDescription parse_device_description(std::string_view text, const std::string& origin);
DeviceDescription read_device_description(const std::string& path);  // throws UsageError

// Where the committed descriptions live: <results>/devices (default_results_dir()).
std::string devices_dir();
// The slugs of the descriptions there, sorted ("nvidia-a100-sxm", ...).
std::vector<std::string> known_devices();
// A device as the command line names it: a path to a .json file (it holds a '/' or
// ends in .json), else a file's slug under devices_dir(). UsageError for an unknown
// slug, with the known ones.
DeviceDescription find_device_description(const std::string& slug_or_path);

}  // namespace wb
