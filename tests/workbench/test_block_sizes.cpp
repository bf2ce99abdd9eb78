// --block-sizes, as wb check and wb sweep both narrow by it (workbench/runtime/block_sizes.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/errors.h"
#include "contract/ops/layernorm_forward.h"
#include "tests/support/test_variant.h"
#include "workbench/runtime/block_sizes.h"

namespace wb {
namespace {

void noop(const LayernormForwardArgs&, const Launch&) {}

// A variant with a block size (32..1024, default 256) and a second axis.
Variant tiled() {
  Variant v = testing::test_variant(&noop, "layernorm_forward", "tiled");
  v.params = {block_size_param(), TuningParam{"tile", {16, 32}, 16}};
  return v;
}

// A variant that takes no block size, only a tile.
Variant untiled() {
  Variant v = testing::test_variant(&noop, "layernorm_forward", "untiled");
  v.params = {TuningParam{"tile", {16, 32, 64}, 32}};
  return v;
}

std::vector<std::string> described(const std::vector<ParamValues>& configs) {
  std::vector<std::string> out;
  for (const ParamValues& p : configs) out.push_back(p.describe());
  return out;
}

TEST(BlockSizes, WithoutAListEveryConfigurationRuns) {
  EXPECT_EQ(configurations_at(tiled(), std::nullopt).size(), tiled().all_params().size());
}

TEST(BlockSizes, AListKeepsTheListedBlockSizesOnEveryOtherAxis) {
  EXPECT_EQ(described(configurations_at(tiled(), std::vector<int>{64, 1024, 48})),
            (std::vector<std::string>{"block_size=64,tile=16", "block_size=64,tile=32", "block_size=1024,tile=16",
                                      "block_size=1024,tile=32"}));
}

TEST(BlockSizes, AVariantWithoutABlockSizeKeepsAllItsConfigurations) {
  EXPECT_EQ(described(configurations_at(untiled(), std::vector<int>{128})),
            (std::vector<std::string>{"tile=16", "tile=32", "tile=64"}));
}

TEST(BlockSizes, AVariantWithNoneOfTheListRunsAtItsDefaultBlockSize) {
  Variant v = tiled();
  v.params[0] = block_size_param({256, 512}, 512);
  EXPECT_EQ(described(configurations_at(v, std::vector<int>{32, 128})),
            (std::vector<std::string>{"block_size=512,tile=16", "block_size=512,tile=32"}));
}

std::string usage_error(const std::vector<int>& sizes, const std::vector<const Variant*>& selected) {
  try {
    check_block_sizes(sizes, selected);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(BlockSizes, ASizeNoSelectedVariantTakesIsAUsageError) {
  const Variant a = tiled(), b = untiled();
  EXPECT_EQ(usage_error({32, 1024}, {&a, &b}), "");
  EXPECT_NE(usage_error({48}, {&a, &b}).find("block size 48 is not legal for any selected variant (legal: 32..1024)"),
            std::string::npos);
  EXPECT_NE(usage_error({128}, {&b}).find("no selected variant takes a block size"), std::string::npos);
}

}  // namespace
}  // namespace wb
