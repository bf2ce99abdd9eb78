#include <gtest/gtest.h>

#include "base/errors.h"
#include "contract/shape.h"

namespace wb {
namespace {

TEST(Shape, PresetsMatchGpt2) {
  // N: llm.c's parameter count of GPT-2 124M with the padded vocabulary.
  EXPECT_EQ(describe(parse_shape("gpt2-124m"), Shape::dim_names()),
            "B=4 T=1024 C=768 NH=12 V=50257 Vp=50304 OC=3072 L=12 N=124475904");
  EXPECT_EQ(parse_shape("llmc-dev").B, 8);
}

TEST(Shape, ExplicitDimsOverrideTheBase) {
  // OC derived (4*C), NH from the base preset.
  EXPECT_EQ(describe(parse_shape("B=8, T=256 ,C=64"), {"B", "T", "C", "OC", "NH"}), "B=8 T=256 C=64 OC=256 NH=12");
  const Shape p = parse_shape("llmc-dev,T=128,V=1000");
  EXPECT_EQ(p.B, 8);
  EXPECT_EQ(p.T, 128);
  EXPECT_EQ(p.Vp, 1024);  // V rounded up to 128
  EXPECT_EQ(parse_shape("V=100,Vp=100").Vp, 100);
}

TEST(Shape, MalformedShapesNameTheProblem) {
  auto message = [](const char* text) {
    try {
      parse_shape(text);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("B=x").find("not an integer"), std::string::npos);
  EXPECT_NE(message("B=4,Q=3").find("unknown dim 'Q'"), std::string::npos);
  EXPECT_NE(message("B=-4").find("must be positive"), std::string::npos);
  EXPECT_NE(message("B=4,B=5").find("given twice"), std::string::npos);
  EXPECT_NE(message("gpt3").find("unknown shape preset"), std::string::npos);
  EXPECT_NE(message("B=4,llmc-dev").find("not of the form"), std::string::npos);
  EXPECT_NE(message("").find("empty"), std::string::npos);
  EXPECT_NE(message("V=100,Vp=64").find("smaller than V"), std::string::npos);
  EXPECT_NE(message("B=99999999999999999999").find("not an integer"), std::string::npos);
}

TEST(Shape, CheckShapesIncludeOddSizesAndTheFullVocabulary) {
  const auto shapes = check_shapes();
  ASSERT_GE(shapes.size(), 3u);
  bool odd = false, vocab = false;
  for (const Shape& s : shapes) {
    odd = odd || (s.C % 4 != 0 && s.T % 2 == 1);
    vocab = vocab || (s.V == 50257 && s.Vp == 50304);
  }
  EXPECT_TRUE(odd);
  EXPECT_TRUE(vocab);
}

TEST(Shape, DescribeNamesOnlyTheGivenDims) {
  EXPECT_EQ(describe(parse_shape("B=2,T=3,C=4"), {"B", "T", "C"}), "B=2 T=3 C=4");
}

}  // namespace
}  // namespace wb
