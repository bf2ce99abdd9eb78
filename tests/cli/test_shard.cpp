// Sharded sweeps (workbench/cli/sweep_shards.h): the --shard flag, the round-robin split of
// a sweep's units, real CPU sweeps split into shards whose union is the unsharded
// sweep, and wb merge: what it joins, what it refuses, and that wb best chooses from
// the merged report what it chooses from the unsharded one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "contract/registry.h"
#include "tests/support/json_near.h"
#include "tests/support/report_fixtures.h"
#include "tests/support/test_helpers.h"
#include "workbench/cli/sweep_shards.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using testing::Result;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

TEST(Shard, ParsesKOverN) {
  const ShardSpec s = parse_shard("2/4");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(parse_shard("1/1").index, 1);
  EXPECT_EQ(parse_shard("12/12").count, 12);
}

TEST(Shard, RefusesWhatIsNotKOverN) {
  for (const char* text : {"", "3", "/", "1/", "/3", "a/b", "1/3/5", " 1/3", "1/3 ", "1.0/3", "+1/3", "-1/3", "1/-3",
                           "99999999999/99999999999", "1:3"})
    EXPECT_NE(testing::usage_error([&] { parse_shard(text); }).find("is not K/N"), std::string::npos) << text;
  EXPECT_NE(testing::usage_error([] { parse_shard("0/0"); }).find("must be at least 1"), std::string::npos);
  EXPECT_NE(testing::usage_error([] { parse_shard("1/0"); }).find("must be at least 1"), std::string::npos);
  EXPECT_NE(testing::usage_error([] { parse_shard("0/3"); }).find("K must be from 1 to 3 (shards are numbered from 1)"),
            std::string::npos);
  EXPECT_NE(testing::usage_error([] { parse_shard("4/3"); }).find("K must be from 1 to 3"), std::string::npos);
}

// Every unit in exactly one shard, the shards within one unit of each other in size,
// and shard_size counting what in_shard holds.
TEST(Shard, RoundRobinHoldsEveryUnitOnceAndBalances) {
  for (int64_t units = 0; units <= 20; ++units) {
    for (int n = 1; n <= 25; ++n) {
      std::vector<int64_t> sizes(n, 0);
      for (int64_t u = 0; u < units; ++u) {
        int holders = 0;
        for (int k = 1; k <= n; ++k)
          if (in_shard(u, {k, n})) {
            ++holders;
            ++sizes[k - 1];
          }
        EXPECT_EQ(holders, 1) << "unit " << u << " of " << units << ", N=" << n;
      }
      for (int k = 1; k <= n; ++k) EXPECT_EQ(shard_size(units, {k, n}), sizes[k - 1]) << k << "/" << n;
      EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()) - *std::min_element(sizes.begin(), sizes.end()), 1);
    }
  }
}

TEST(Shard, PlanFingerprintFollowsTheKeysAndTheirOrder) {
  const std::string ab = plan_fingerprint({"a", "b"});
  EXPECT_EQ(ab.size(), 16u);
  EXPECT_EQ(plan_fingerprint({"a", "b"}), ab);
  EXPECT_NE(plan_fingerprint({"b", "a"}), ab);
  EXPECT_NE(plan_fingerprint({"ab"}), ab);
  EXPECT_NE(plan_fingerprint({"a", "b", "c"}), ab);
}

// --- Real sweeps on the CPU: the shards' units are the unsharded sweep's. ---

// Three rungs of gelu_forward's CPU ladder at a tiny shape: the reference, then two
// rungs at each of their thread counts (5 units), enough for N = 1, 2, 3 and more
// shards than units.
constexpr const char* kSweep =
    "sweep gelu_forward --backend cpu --variants 1,2,3 --shape B=2,T=8,C=32 --seed 11 --repetitions 1 "
    "--min-time 0.001 --no-flush";

class ShardedSweep : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    whole_ = new Report(sweep_to("whole.json", ""));
    for (const Record& r : whole_->records) whole_keys_.push_back(unit_key(r));
  }
  static void TearDownTestSuite() {
    delete whole_;
    whole_ = nullptr;
    whole_keys_.clear();
    fs::remove_all(dir());
  }
  static fs::path dir() { return fs::temp_directory_path() / ("wb_shard_" + std::to_string(::getpid())); }
  static Report sweep_to(const std::string& name, const std::string& flags) {
    const std::string out = (dir() / name).string();
    const Result r = wb(std::string(kSweep) + " " + flags + " --out " + out);
    EXPECT_EQ(r.code, 0) << r.output;
    return read_report(out, Registry::global());
  }
  static inline Report* whole_ = nullptr;
  static inline std::vector<std::string> whole_keys_;
};

TEST_F(ShardedSweep, TheShardsTogetherAreTheSweepWithoutOverlap) {
  const int64_t units = int64_t(whole_keys_.size());
  ASSERT_GE(units, 4) << "the sweep needs a few units for the test to mean something";
  EXPECT_FALSE(whole_->context.shard) << "an unsharded sweep is no shard";
  const std::string plan = plan_fingerprint(whole_keys_);
  for (const int n : {1, 2, 3, int(units) + 1}) {
    std::multiset<std::string> seen;
    std::string shard_files;
    for (int k = 1; k <= n; ++k) {
      const std::string name = "n" + std::to_string(n) + "_k" + std::to_string(k) + ".json";
      const Report shard = sweep_to(name, "--shard " + std::to_string(k) + "/" + std::to_string(n));
      shard_files += " " + (dir() / name).string();
      ASSERT_TRUE(shard.context.shard) << name;
      EXPECT_EQ(shard.context.shard->index, k);
      EXPECT_EQ(shard.context.shard->count, n);
      EXPECT_EQ(shard.context.shard->units, units);
      EXPECT_EQ(shard.context.shard->plan, plan) << "the same plan on every shard, and the unsharded sweep's";
      EXPECT_EQ(shard.context.shard->seed, 11u);
      EXPECT_EQ(int64_t(shard.records.size()), shard_size(units, {k, n})) << name;
      // The shard's units are those of its places in the unsharded sweep's order.
      std::vector<std::string> expected, got;
      for (int64_t u = k - 1; u < units; u += n) expected.push_back(whole_keys_[u]);
      for (const Record& r : shard.records) {
        got.push_back(unit_key(r));
        seen.insert(unit_key(r));
        EXPECT_EQ(r.seed, 11u);
      }
      EXPECT_EQ(got, expected) << name;
      if (k > units) {
        EXPECT_TRUE(shard.records.empty()) << "shard " << k << " of " << n << " is empty";
      }
    }
    EXPECT_EQ(seen, std::multiset<std::string>(whole_keys_.begin(), whole_keys_.end())) << "N=" << n;

    // Merged, they are the sweep's units in its order.
    const std::string merged_path = (dir() / ("merged_" + std::to_string(n) + ".json")).string();
    const Result m = wb("merge" + shard_files + " --out " + merged_path);
    ASSERT_EQ(m.code, 0) << m.output;
    const Report merged = read_report(merged_path, Registry::global());
    std::vector<std::string> merged_keys;
    for (const Record& r : merged.records) merged_keys.push_back(unit_key(r));
    EXPECT_EQ(merged_keys, whole_keys_) << "N=" << n;
    ASSERT_TRUE(merged.context.merged);
    EXPECT_FALSE(merged.context.shard);
    EXPECT_EQ(merged.context.merged->shards.size(), std::size_t(n));
    EXPECT_TRUE(merged.context.merged->missing.empty());
  }
}

TEST_F(ShardedSweep, AnEmptyShardWritesAValidReport) {
  const int n = int(whole_keys_.size()) + 1;
  const Report empty = sweep_to("empty.json", "--shard " + std::to_string(n) + "/" + std::to_string(n));
  EXPECT_TRUE(empty.records.empty());
  ASSERT_TRUE(empty.context.shard);
  EXPECT_EQ(empty.context.shard->units, int64_t(whole_keys_.size()));
  EXPECT_EQ(empty.context.shard->seed, 11u);
  EXPECT_EQ(empty.context.device.backend, Backend::cpu);
}

TEST_F(ShardedSweep, IsolatedShardsMeasureTheirOwnUnits) {
  const Report shard = sweep_to("isolated.json", "--shard 2/3 --isolate");
  std::vector<std::string> expected, got;
  for (std::size_t u = 1; u < whole_keys_.size(); u += 3) expected.push_back(whole_keys_[u]);
  for (const Record& r : shard.records) {
    got.push_back(unit_key(r));
    EXPECT_EQ(r.status, Status::ok) << unit_key(r) << ": " << r.reason;
  }
  EXPECT_EQ(got, expected);
}

// --- wb merge and wb best on fixture reports. ---

Record rec(int variant, int block_size, double median_us, double stddev_us) {
  Record r = testing::timed_record("gelu_forward", variant, median_us * 1e-6, stddev_us * 1e-6);
  r.source = "variants/gelu_forward/0" + std::to_string(variant) + ".cu";
  r.source_hash = std::string(64, char('0' + variant));
  r.params.set("block_size", block_size);
  r.seed = 7;
  return r;
}

// A sweep of two variants at four block sizes each, and the fastest is variant 2 at 256.
Report whole_sweep(const std::string& device = "Fixture GPU") {
  Report r = testing::fixture_report({}, device);
  r.context.host = "node1";
  r.context.source.commit = "abc123";
  r.context.ceilings.copy_gbps = 3000;
  int i = 0;
  for (int variant : {1, 2})
    for (int bs : {128, 256, 512, 1024}) r.records.push_back(rec(variant, bs, 100.0 - 10 * variant - i++, 0.1));
  r.records[5].timing->median_s = 20e-6;
  return r;
}

// The reports the N shards of `sweep` would write: record i into shard i % N + 1.
std::vector<Report> split(const Report& sweep, int n) {
  std::vector<std::string> keys;
  for (const Record& r : sweep.records) keys.push_back(unit_key(r));
  std::vector<Report> shards;
  for (int k = 1; k <= n; ++k) {
    Report s;
    s.context = sweep.context;
    s.context.host = "node" + std::to_string(k);
    s.context.shard = ShardInfo{k, n, int64_t(keys.size()), plan_fingerprint(keys), 7};
    for (std::size_t u = 0; u < sweep.records.size(); ++u)
      if (in_shard(int64_t(u), {k, n})) s.records.push_back(sweep.records[u]);
    shards.push_back(s);
  }
  return shards;
}

class Merge : public testing::ReportFolder {
 protected:
  // Writes the shards, returning their paths separated by spaces.
  std::string write_all(const std::vector<Report>& shards, const std::string& prefix = "shard") {
    std::string paths;
    for (std::size_t k = 0; k < shards.size(); ++k)
      paths += " " + write(prefix + std::to_string(k + 1) + ".json", shards[k]);
    return paths;
  }
  std::string out() const { return path("merged.json"); }
};

TEST_F(Merge, JoinsTheShardsIntoTheSweep) {
  const Report whole = whole_sweep();
  const Result r = wb("merge" + write_all(split(whole, 3)) + " --out " + out());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("3 of 3 shards"), std::string::npos) << r.output;
  const Report merged = read_report(out(), Registry::global());
  // The records as the unsharded sweep wrote them, in its order.
  EXPECT_TRUE(testing::json_near(to_json(merged)["records"], to_json(whole)["records"]));
  ASSERT_TRUE(merged.context.merged);
  const MergeInfo& m = *merged.context.merged;
  EXPECT_EQ(m.count, 3);
  EXPECT_EQ(m.units, 8);
  ASSERT_EQ(m.shards.size(), 3u);
  EXPECT_EQ(m.shards[1].index, 2);
  EXPECT_EQ(m.shards[1].host, "node2");
  EXPECT_EQ(m.shards[1].records, 3);
  EXPECT_EQ(fs::path(m.shards[1].file).filename(), "shard2.json");
  EXPECT_EQ(merged.context.host, "node1, node2, node3");
  EXPECT_NE(merged.context.command.find("wb merge"), std::string::npos) << merged.context.command;
  EXPECT_DOUBLE_EQ(merged.context.ceilings.copy_gbps, 3000);
  // Nothing but the merged report is left in the folder: written through a temporary file.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_.path()))
    files += e.path().filename().string().find(".tmp") == std::string::npos;
  EXPECT_EQ(files, 4);
}

TEST_F(Merge, TheShardsCanBeGivenInAnyOrder) {
  const std::vector<Report> shards = split(whole_sweep(), 3);
  const std::string paths =
      " " + write("c.json", shards[2]) + " " + write("a.json", shards[0]) + " " + write("b.json", shards[1]);
  ASSERT_EQ(wb("merge" + paths + " --out " + out()).code, 0);
  EXPECT_TRUE(testing::json_near(to_json(read_report(out(), Registry::global()))["records"],
                                 to_json(whole_sweep())["records"]));
  // {device} in --out is the slug of the shards' device, as in wb sweep.
  const Result r = wb("merge" + paths + " --out '" + path("{device}/m.json") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("fixture-gpu/m.json"))) << r.output;
}

// wb best chooses from the merged report what it chooses from the unsharded one.
TEST_F(Merge, BestChoosesFromTheMergedReportAsFromTheWholeSweep) {
  const Report whole = whole_sweep();
  const std::string whole_path = write("whole.json", whole);
  for (const int n : {1, 2, 3, 11}) {
    const std::string merged = path("merged" + std::to_string(n) + ".json");
    const Result m = wb("merge" + write_all(split(whole, n), "n" + std::to_string(n) + "_") + " --out " + merged);
    ASSERT_EQ(m.code, 0) << m.output;
    const std::string from_whole = path("best_whole.json");
    const std::string from_merged = path("best_merged.json");
    ASSERT_EQ(wb("best " + whole_path + " --replace --out " + from_whole).code, 0);
    const Result b = wb("best " + merged + " --replace --out " + from_merged);
    ASSERT_EQ(b.code, 0) << b.output;
    EXPECT_EQ(b.output.find("warning"), std::string::npos) << "a whole merge is a whole sweep: " << b.output;
    const BestSection x = read_best(from_whole).sections.at(0), y = read_best(from_merged).sections.at(0);
    ASSERT_EQ(x.entries.size(), 1u);
    ASSERT_EQ(y.entries.size(), 1u);
    EXPECT_EQ(y.entries[0].variant, 2) << "N=" << n;
    EXPECT_EQ(y.entries[0].variant, x.entries[0].variant);
    EXPECT_EQ(y.entries[0].params, x.entries[0].params);
    EXPECT_EQ(y.entries[0].params.describe(), "block_size=256");
    EXPECT_DOUBLE_EQ(y.entries[0].median_s, x.entries[0].median_s);
    EXPECT_EQ(y.entries[0].note, x.entries[0].note);
  }
}

TEST_F(Merge, RefusesShardsOfDifferentDevices) {
  std::vector<Report> shards = split(whole_sweep(), 2);
  shards[1].context.device.name = "Other GPU";
  shards[1].context.device.slug = "other-gpu";
  EXPECT_EXIT_WITH(wb("merge" + write_all(shards) + " --out " + out()), 2, "they differ in their devices");
  EXPECT_FALSE(fs::exists(out()));
}

TEST_F(Merge, RefusesDifferentSeedsCommitsBuildsAndTimings) {
  auto refused = [&](const std::function<void(Report&)>& change, const std::string& what) {
    std::vector<Report> shards = split(whole_sweep(), 3);
    change(shards[2]);
    EXPECT_EXIT_WITH(wb("merge" + write_all(shards) + " --out " + out()), 2, what);
    EXPECT_FALSE(fs::exists(out())) << what;
  };
  refused(
      [](Report& r) {
        r.context.shard->seed = 8;
        for (Record& rec : r.records) rec.seed = 8;
      },
      "they differ in their seeds ('7' and '8')");
  refused([](Report& r) { r.records[0].seed = 9; }, "has seed 9, its shard seed 7");
  refused([](Report& r) { r.context.source.commit = "def456"; }, "they differ in their source commits");
  refused([](Report& r) { r.context.source.dirty = true; }, "with uncommitted changes");
  refused([](Report& r) { r.context.build.cxx_flags = "-O0"; }, "they differ in their C++ flags");
  refused([](Report& r) { r.context.timing.repetitions = 5; }, "they differ in their timed repetitions");
  refused([](Report& r) { r.context.timing.flush_cache = !r.context.timing.flush_cache; },
          "they differ in their cache flushes");
  refused([](Report& r) { r.records[0].source_hash = std::string(64, 'f'); }, "was built from different sources");
  refused([](Report& r) { r.context.shard->plan = "0123456789abcdef"; }, "they differ in their sweeps");
}

TEST_F(Merge, RefusesOverlappingShards) {
  const std::vector<Report> shards = split(whole_sweep(), 3);
  // The same shard twice.
  const std::string twice = " " + write("a.json", shards[0]) + " " + write("b.json", shards[1]) + " " +
                            write("a_again.json", shards[0]) + " " + write("c.json", shards[2]);
  EXPECT_EXIT_WITH(wb("merge" + twice + " --out " + out()), 2, "shard 1/3 is given twice");
  // Two shards holding the same unit.
  std::vector<Report> overlapping = shards;
  overlapping[1].records[0] = overlapping[0].records[0];
  EXPECT_EXIT_WITH(wb("merge" + write_all(overlapping) + " --out " + out()), 2, "is measured twice");
  EXPECT_FALSE(fs::exists(out()));
}

TEST_F(Merge, RefusesMissingShardsUnlessAllowed) {
  const std::vector<Report> shards = split(whole_sweep(), 3);
  const std::string two = " " + write("a.json", shards[0]) + " " + write("c.json", shards[2]);
  EXPECT_EXIT_WITH(wb("merge" + two + " --out " + out()), 2, "shard(s) 2 of 3 missing (3 of 8 units not measured)");
  EXPECT_FALSE(fs::exists(out()));
  const Result r = wb("merge" + two + " --allow-missing --out " + out());
  EXPECT_EXIT_WITH(r, 0, "wb: warning: shard(s) 2 of 3 missing");
  const Report merged = read_report(out(), Registry::global());
  EXPECT_EQ(merged.records.size(), 5u);
  ASSERT_TRUE(merged.context.merged);
  EXPECT_EQ(merged.context.merged->missing, std::vector<int>{2});
  // wb best takes it, and says what it lacks.
  EXPECT_EXIT_WITH(wb("best " + out() + " --out " + path("best.json")), 0,
                   "was merged without 1 of the sweep's 3 shards");
  // Runs of missing shards are named as ranges.
  const std::vector<Report> many = split(whole_sweep(), 8);
  const std::string some = " " + write("m1.json", many[0]) + " " + write("m5.json", many[4]);
  EXPECT_EXIT_WITH(wb("merge" + some + " --out " + out()), 2, "shard(s) 2-4, 6-8 of 8 missing (6 of 8 units");
}

TEST_F(Merge, RefusesWhatIsNotAShardsWholeReport) {
  const Report whole = whole_sweep();
  std::vector<Report> shards = split(whole, 2);
  EXPECT_EXIT_WITH(wb("merge " + write("whole.json", whole) + " --out " + out()), 2, "is not the report of a shard");
  std::vector<Report> truncated = shards;
  truncated[0].records.pop_back();
  EXPECT_EXIT_WITH(wb("merge" + write_all(truncated) + " --out " + out()), 2,
                   "holds 3 records, but shard 1/2 of a sweep of 8 units holds 4");
  std::vector<Report> swapped = shards;
  std::swap(swapped[0].records[0], swapped[0].records[1]);
  EXPECT_EXIT_WITH(wb("merge" + write_all(swapped) + " --out " + out()), 2, "do not make its plan");
  const std::string paths = write_all(shards);
  ASSERT_EQ(wb("merge" + paths + " --out " + out()).code, 0);
  EXPECT_EXIT_WITH(wb("merge " + out() + " --out " + path("again.json")), 2, "is a merged report already");
  const std::string first = paths.substr(1, paths.find(' ', 1) - 1);
  EXPECT_EXIT_WITH(wb("merge" + paths + " --out " + first), 2, "is one of the shards' reports");
  EXPECT_EXIT_WITH(wb("merge --out " + out()), 2, "shards is required");
  EXPECT_EXIT_WITH(wb("merge" + paths), 2, "--out is required");
  EXPECT_EXIT_WITH(wb("merge " + path("nowhere.json") + " --out " + out()), 2, "cannot read");
}

// A shard's report given to wb best directly is chosen from, with a warning.
TEST_F(Merge, BestWarnsOfAShardsReport) {
  const std::vector<Report> shards = split(whole_sweep(), 2);
  EXPECT_EXIT_WITH(wb("best " + write("s.json", shards[1]) + " --out " + path("best.json")), 0,
                   "is shard 2/2 of a sweep: only its 4 units are chosen from");
}

TEST(ShardReport, RoundTripsAndRefusesBadFields) {
  Report r = split(whole_sweep(), 3)[1];
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["context"]["shard"]["index"], 2);
  const Report back = report_from_json(j, "memory");
  ASSERT_TRUE(back.context.shard);
  EXPECT_EQ(back.context.shard->plan, r.context.shard->plan);
  EXPECT_TRUE(testing::json_near(to_json(back), j));
  nlohmann::json bad = j;
  bad["context"]["shard"]["index"] = 4;
  EXPECT_NE(testing::usage_error([&] { report_from_json(bad, "x"); }).find("shards are numbered 1 to 3"),
            std::string::npos);
  bad = j;
  bad["context"]["shard"]["count"] = 0;
  EXPECT_NE(testing::usage_error([&] { report_from_json(bad, "x"); }).find("'count' is 0, not an integer in [1, "),
            std::string::npos);
  bad = j;
  bad["context"]["shard"]["seed"] = -1;
  EXPECT_NE(testing::usage_error([&] { report_from_json(bad, "x"); }).find("'seed' is not an integer"),
            std::string::npos);
  // A report from before shards has neither field.
  nlohmann::json old = j;
  old["context"].erase("shard");
  EXPECT_FALSE(report_from_json(old, "old").context.shard);
  EXPECT_FALSE(report_from_json(old, "old").context.merged);
}

}  // namespace
}  // namespace wb
