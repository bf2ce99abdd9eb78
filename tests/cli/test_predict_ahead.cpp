// wb predict --workloads --out: predictions made before a device times them
// (workbench/cli/predict_ahead.h, docs/formats.md wb.predictions/1), for the H200 of
// the committed sweep reports, at small shapes so that the emulator counts quickly.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "contract/launch_resources.h"
#include "contract/registry.h"
#include "tests/support/test_helpers.h"
#include "workbench/runtime/predict.h"

namespace wb {
namespace {

using nlohmann::json;

const std::string kMeasured = std::string(WB_SOURCE_DIR) + "/results/nvidia-h200/sweep/00-layernorm_forward.json";

testing::Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// A two-call step: layernorm_forward (timed on the H200 by kMeasured) and residual_forward
// (never timed there), three calls of the second.
std::string write_workloads(const testing::TempDir& dir) {
  const json w{{"schema", "wb.workloads/1"},
               {"model", "test"},
               {"B", 2},
               {"T", 8},
               {"calls",
                {{{"op", "layernorm_forward"}, {"shape", {{"B", 2}, {"T", 8}, {"C", 64}}}, {"calls", 1}},
                 {{"op", "residual_forward"}, {"shape", {{"B", 2}, {"T", 8}, {"C", 64}}}, {"calls", 3}}}}};
  const std::string path = dir / "workloads.json";
  std::ofstream(path) << w.dump(1);
  return path;
}

TEST(PredictAhead, PredictsEveryNeverTimedConfigurationAndTheStepBothWays) {
  // Which CUDA configuration can launch is known from the compiled kernels' resources.
  if (!compiled_kernels_known()) GTEST_SKIP() << "a build without nvcc has no table of compiled kernels";
  const testing::TempDir dir;
  const std::string out = dir / "predictions.json";
  const testing::Result r = wb("predict " + kMeasured + " --workloads " + write_workloads(dir) + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  const json p = read_json(out);
  EXPECT_EQ(p["schema"], "wb.predictions/1");
  EXPECT_EQ(p["made"]["model"], kPredictModel);
  EXPECT_EQ(p["device"]["slug"], "nvidia-h200");

  // The variants the report timed are not predicted; every one it did not is, with its
  // identity, and every prediction is a positive time.
  std::set<int> timed;
  const json measured = read_json(kMeasured);
  for (const json& rec : measured["records"])
    if (rec["status"] == "ok" && rec.contains("timing") && !rec["timing"].is_null())
      timed.insert(rec["variant"].get<int>());
  ASSERT_FALSE(timed.empty());
  const Registry& reg = Registry::global();
  std::map<std::string, std::set<int>> predicted;
  for (const json& x : p["predictions"]) {
    const std::string op = x["op"];
    const int id = x["variant"];
    predicted[op].insert(id);
    EXPECT_EQ(x["backend"], "cuda");
    EXPECT_EQ(x["source_hash"], reg.variant(op, Backend::cuda, id).source_hash) << op << " " << id;
    EXPECT_GT(x["seconds"].get<double>(), 0) << op << " " << id;
    if (op == "layernorm_forward") {
      EXPECT_EQ(timed.count(id), 0u) << "cuda/" << id << " was timed";
    }
  }
  // Every CUDA rung of wb's, none of PyTorch's (nothing of theirs is counted: docs/torch.md).
  for (const Variant* v : reg.variants("residual_forward", Backend::cuda))
    EXPECT_EQ(predicted["residual_forward"].count(v->id), is_torch_rung(*v) ? 0u : 1u) << v->key();

  // The step: launched and as a graph, each the sum of calls x seconds over both calls.
  ASSERT_EQ(p["steps"].size(), 2u);
  EXPECT_EQ(p["steps"][0]["launch"], "launched");
  EXPECT_EQ(p["steps"][1]["launch"], "graph");
  for (const json& step : p["steps"]) {
    ASSERT_EQ(step["calls"].size(), 2u);
    double ms = 0;
    for (const json& c : step["calls"]) ms += c["calls"].get<int>() * c["seconds"].get<double>() * 1e3;
    EXPECT_NEAR(step["ms"].get<double>(), ms, 1e-9);
  }
  EXPECT_LT(p["steps"][1]["ms"].get<double>(), p["steps"][0]["ms"].get<double>()) << "a graph node costs less";
}

TEST(PredictAhead, WorkloadsAndOutGoTogether) {
  EXPECT_EXIT_WITH(wb("predict " + kMeasured + " --out x.json"), 2, "--workloads and --out go together");
}

}  // namespace
}  // namespace wb
