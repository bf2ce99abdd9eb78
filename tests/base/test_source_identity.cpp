// A variant's identity (base/source_identity.h): what moves, comments and formatting do
// not change, what a changed constant in the kernel, a header or the host code beside
// one does; on small trees written here, then on a copy of the repository's own files.
#include "base/source_identity.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/test_helpers.h"

namespace wb::identity {
namespace {

namespace fs = std::filesystem;

// A small repository in a fresh temporary folder.
class Tree {
 public:
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root() / rel).parent_path());
    std::ofstream(root() / rel) << text;
  }
  std::string read(const std::string& rel) const {
    std::ifstream in(root() / rel);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Replaces the first `from` in the file with `to` (and fails the test if absent).
  void edit(const std::string& rel, const std::string& from, const std::string& to) {
    std::string text = read(rel);
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << rel << " has no '" << from << "'";
    write(rel, text.replace(at, from.size(), to));
  }
  void move(const std::string& from, const std::string& to) {
    fs::create_directories((root() / to).parent_path());
    fs::rename(root() / from, root() / to);
  }
  std::string id(const std::string& rel) const {
    Config c;
    c.root = root();
    return of(rel, c).hash;
  }
  const fs::path& root() const { return dir_.path(); }

 private:
  wb::testing::TempDir dir_;
};

// A variant in the project's shape: a kernel, a shared device header with host code
// beside it, the op's argument header, the dialect with an emulator branch.
void write_variant(Tree& t) {
  t.write("device/cuda/dialect.cuh", R"(#pragma once
// The two compilers.
#if WB_EMU
#include "emu/dialect.h"
#else
#define WB_LAUNCH(...) launch(__FILE__, __LINE__, __VA_ARGS__)
#endif
)");
  t.write("emu/dialect.h", "#pragma once\n#define WB_LAUNCH(...) emulate(__FILE__, __LINE__, __VA_ARGS__)\n");
  t.write("device/cuda/helper.cuh", R"(#pragma once
#include <cstdint>
#include "device/cuda/dialect.cuh"
namespace wb::cuda {
constexpr int kWarp = 32;  // lanes
void check_launch(const char* what);
__device__ inline float twice(float x) { return 2.0f * x; }
}
)");
  t.write("device/cuda/helper.cpp", R"(#include "device/cuda/helper.cuh"
namespace wb::cuda {
void check_launch(const char* what) { if (!what) throw 1; }
}
)");
  t.write("contract/ops/scale.h", R"(#pragma once
namespace wb {
struct ScaleArgs { float* out; const float* inp; int n; };
constexpr float kScaleEps = 1e-5f;
}
)");
  t.write("variants/scale/01_naive.cu", R"(// scale, CUDA variant 1: the naive port.
#include <cstddef>

#include "device/cuda/helper.cuh"
#include "contract/ops/scale.h"

namespace wb::variants {
__global__ void scale(float* out, const float* inp, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = cuda::twice(inp[i]) + kScaleEps;
}
void launch(const ScaleArgs& a) {
  WB_LAUNCH(scale, (a.n + 255) / 256, 256, 0, nullptr, a.out, a.inp, a.n);
  cuda::check_launch("scale");
}
}
)");
}

TEST(SourceIdentity, CoversTheVariantItsHeadersAndTheHostCodeBesideThem) {
  Tree t;
  write_variant(t);
  Config c;
  c.root = t.root();
  const Identity id = of("variants/scale/01_naive.cu", c);
  const std::vector<std::string> expected = {"variants/scale/01_naive.cu", "device/cuda/helper.cuh",
                                             "device/cuda/dialect.cuh", "contract/ops/scale.h",
                                             "device/cuda/helper.cpp"};
  EXPECT_EQ(id.files, expected);
  EXPECT_EQ(id.hash.size(), 64u);
  EXPECT_EQ(id.normalised.find("emulate"), std::string::npos) << "the emulator's branch is not the device's code";
}

TEST(SourceIdentity, AMovedHeaderAnEditedCommentAndReformattedCodeKeepIt) {
  Tree t;
  write_variant(t);
  const std::string before = t.id("variants/scale/01_naive.cu");

  // The helper moves beside its rungs, as an op family's kernels do.
  t.move("device/cuda/helper.cuh", "variants/scale/helper.cuh");
  t.move("device/cuda/helper.cpp", "variants/scale/helper.cpp");
  t.edit("variants/scale/01_naive.cu", "\"device/cuda/helper.cuh\"", "\"variants/scale/helper.cuh\"");
  t.edit("variants/scale/helper.cpp", "\"device/cuda/helper.cuh\"", "\"variants/scale/helper.cuh\"");
  // Include sorting follows paths: the moved header now comes after the op's.
  t.edit("variants/scale/01_naive.cu",
         "#include \"variants/scale/helper.cuh\"\n#include \"contract/ops/scale.h\"",
         "#include \"contract/ops/scale.h\"\n#include \"variants/scale/helper.cuh\"");
  t.edit("variants/scale/01_naive.cu", "// scale, CUDA variant 1: the naive port.",
         "// scale, CUDA variant 1: the naive port of the CPU loop,\n// one thread per element.");
  t.edit("variants/scale/01_naive.cu", "if (i < n) out[i] = cuda::twice(inp[i]) + kScaleEps;",
         "if (i < n)\n    out[i] = cuda::twice(inp[i])  +  kScaleEps; /* one store */");
  t.edit("variants/scale/helper.cuh", "constexpr int kWarp = 32;  // lanes", "constexpr int kWarp=32;");
  // The emulator is test machinery, never run on a device.
  t.edit("emu/dialect.h", "emulate(", "emulate_checked(");
  t.edit("device/cuda/dialect.cuh", "#include \"emu/dialect.h\"", "#include \"emu/dialect.h\"  // moved");
  EXPECT_EQ(t.id("variants/scale/01_naive.cu"), before);
}

TEST(SourceIdentity, AChangedConstantInTheKernelAHeaderOrTheHostCodeBesideOneChangesIt) {
  struct Edit {
    const char* file;
    const char* from;
    const char* to;
  };
  const Edit edits[] = {
      {"variants/scale/01_naive.cu", "(a.n + 255) / 256, 256", "(a.n + 127) / 128, 128"},  // the launcher
      {"variants/scale/01_naive.cu", "if (i < n)", "if (i <= n)"},                          // the kernel
      {"contract/ops/scale.h", "1e-5f", "1e-6f"},                                            // the op's constant
      {"device/cuda/helper.cuh", "2.0f * x", "3.0f * x"},                                  // a device helper
      {"device/cuda/helper.cpp", "throw 1", "throw 2"},                                    // host code beside it
      {"device/cuda/dialect.cuh", "launch(__FILE__", "launch_async(__FILE__"},             // the device branch
  };
  for (const Edit& e : edits) {
    Tree t;
    write_variant(t);
    const std::string before = t.id("variants/scale/01_naive.cu");
    t.edit(e.file, e.from, e.to);
    EXPECT_NE(t.id("variants/scale/01_naive.cu"), before) << e.file << ": " << e.from << " -> " << e.to;
  }
}

TEST(SourceIdentity, AConditionTheConfigurationDoesNotDecideKeepsEveryBranch) {
  Tree t;
  t.write("device/cuda/mma.cuh", R"(#pragma once
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ inline int mma() { return 1; }
#else
__device__ inline int mma() { return 0; }
#endif
#if WB_EMU || WB_HAVE_CUDNN
int cudnn_or_emu();
#endif
#if !WB_EMU && 0
int never();
#endif
)");
  t.write("variants/op/01_x.cu", "#include \"device/cuda/mma.cuh\"\nint x() { return mma(); }\n");
  Config c;
  c.root = t.root();
  const Identity id = of("variants/op/01_x.cu", c);
  EXPECT_NE(id.normalised.find("return 1"), std::string::npos);
  EXPECT_NE(id.normalised.find("return 0"), std::string::npos);
  EXPECT_NE(id.normalised.find("cudnn_or_emu"), std::string::npos) << "WB_HAVE_CUDNN is not decided";
  EXPECT_EQ(id.normalised.find("never"), std::string::npos) << "!WB_EMU && 0 is decided: false";
  const std::string before = id.hash;
  t.edit("device/cuda/mma.cuh", "return 0", "return 2");  // the branch a device below sm_80 compiles
  EXPECT_NE(t.id("variants/op/01_x.cu"), before);
}

TEST(SourceIdentity, TokensThatMeanDifferentThingsStayApart) {
  // Whitespace does not count, but it never joins or splits a token. (Outside
  // directives, where lines break does not count either: the tokens are compared flat.)
  const auto flat = [](const std::string& text) {
    std::vector<std::string> all;
    for (const auto& line : tokenize(text)) all.insert(all.end(), line.begin(), line.end());
    return all;
  };
  const auto same = [&](const std::string& a, const std::string& b) { return flat(a) == flat(b); };
  EXPECT_TRUE(same("x=a+b;", "x = a + b ;"));
  EXPECT_FALSE(same("x = a + +b;", "x = a ++b;"));
  EXPECT_FALSE(same("x = a - -b;", "x = a --b;"));
  EXPECT_FALSE(same("#define F(x) x\n", "#define F (x) x\n"));  // a function-like macro or not
  EXPECT_FALSE(same("s = \"a  b\";", "s = \"a b\";"));           // inside a literal it counts
  EXPECT_TRUE(same("s = \"a // b\"; // c", "s = \"a // b\";"));
  EXPECT_TRUE(same("x = 1e-5f; /* a\nb */ y = 2;", "x = 1e-5f;\ny = 2;"));
  EXPECT_FALSE(same("x = 1e-5f;", "x = 1e-6f;"));
  EXPECT_EQ(tokenize("a >>= b;")[0], (std::vector<std::string>{"a", ">>=", "b", ";"}));
  EXPECT_EQ(tokenize("#include <cuda_runtime.h>")[0], (std::vector<std::string>{"#", "include", "<cuda_runtime.h>"}));
  EXPECT_EQ(tokenize("#define A \\\n  1\nint b;").size(), 2u) << "a continued line is one line";
}

TEST(SourceIdentity, AnUnreadableFileOrUnbalancedConditionalIsAnError) {
  Tree t;
  Config c;
  c.root = t.root();
  EXPECT_THROW(of("variants/op/01_missing.cu", c), std::runtime_error);
  t.write("variants/op/01_x.cu", "#if A\nint x;\n");
  EXPECT_THROW(of("variants/op/01_x.cu", c), std::runtime_error);
}

// The repository's own files, copied: a moved header and an edited comment keep every
// identity; kLayernormEps changes layernorm's variants and leaves GELU's alone.
TEST(SourceIdentity, OnTheRepositorysOwnVariants) {
  Tree t;
  const fs::path source(WB_SOURCE_DIR);
  for (const char* room : {"base", "contract", "device", "variants"})
    fs::copy(source / room, t.root() / room, fs::copy_options::recursive);
  const std::string layernorm = "variants/layernorm_forward/06_vec4_registers.cu";
  const std::string gelu = "variants/gelu_forward/02_vec4.cu";
  const std::string l0 = t.id(layernorm), g0 = t.id(gelu);

  // Move the op header of layernorm_forward, as a reorganisation would.
  t.move("contract/ops/layernorm_forward.h", "contract/layernorm/forward.h");
  for (const auto& entry : fs::recursive_directory_iterator(t.root())) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), t.root()).generic_string();
    std::string text = t.read(rel);
    const std::string from = "\"contract/ops/layernorm_forward.h\"";
    for (std::size_t at; (at = text.find(from)) != std::string::npos;)
      text.replace(at, from.size(), "\"contract/layernorm/forward.h\"");
    t.write(rel, text);
  }
  t.edit("contract/layernorm/forward.h", "#pragma once\n", "#pragma once\n// A comment added here.\n");
  EXPECT_EQ(t.id(layernorm), l0);
  EXPECT_EQ(t.id(gelu), g0);

  const std::string eps = t.read("contract/layernorm/forward.h");
  ASSERT_NE(eps.find("kLayernormEps = 1e-5f"), std::string::npos);
  t.edit("contract/layernorm/forward.h", "kLayernormEps = 1e-5f", "kLayernormEps = 1e-6f");
  EXPECT_NE(t.id(layernorm), l0);
  EXPECT_EQ(t.id(gelu), g0);
}

}  // namespace
}  // namespace wb::identity
