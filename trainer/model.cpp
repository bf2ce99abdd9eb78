#include "trainer/model.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include "kernels/errors.h"
#include "workbench/runtime/rng.h"

namespace wb::trainer {
namespace {

constexpr int32_t kModelMagic = 20240326;
constexpr int32_t kModelVersion = 3;
constexpr int kHeaderInts = 256;

// Indices into the 16 tensors.
enum : int { wte, wpe, ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb };

}  // namespace

void Config::validate() const {
  auto bad = [&](const std::string& why) {
    return UsageError("invalid GPT-2 configuration (" + describe() + "): " + why);
  };
  if (maxT <= 0 || V <= 0 || Vp <= 0 || L <= 0 || NH <= 0 || C <= 0) throw bad("every dimension must be positive");
  if (Vp < V) throw bad("Vp must be at least V");
  if (C % NH != 0) throw bad("C must be divisible by NH");
}

std::string Config::describe() const {
  return "L=" + std::to_string(L) + " C=" + std::to_string(C) + " NH=" + std::to_string(NH) +
         " V=" + std::to_string(V) + " Vp=" + std::to_string(Vp) + " maxT=" + std::to_string(maxT);
}

Config config_from_init(const std::string& spec) {
  Config c;
  c.maxT = 1024;
  c.V = 50257;
  c.Vp = 50304;
  if (spec == "d12") {
    c.L = 12, c.C = 768, c.NH = 12;
  } else if (spec == "d24") {
    c.L = 24, c.C = 1024, c.NH = 16;
  } else if (spec == "d36") {
    c.L = 36, c.C = 1280, c.NH = 20;
  } else if (spec == "d48") {
    c.L = 48, c.C = 1600, c.NH = 25;
  } else {
    int L = 0, C = 0, NH = 0;
    char extra = 0;
    if (std::sscanf(spec.c_str(), "%d,%d,%d%c", &L, &C, &NH, &extra) != 3)
      throw UsageError("--init '" + spec + "' is neither d12, d24, d36, d48 nor L,C,NH (e.g. 4,128,4)");
    c.L = L, c.C = C, c.NH = NH;
  }
  c.validate();
  return c;
}

const std::array<const char*, kNumParamTensors>& param_names() {
  static const std::array<const char*, kNumParamTensors> names{"wte",      "wpe",      "ln1w", "ln1b", "qkvw", "qkvb",
                                                               "attprojw", "attprojb", "ln2w", "ln2b", "fcw",  "fcb",
                                                               "fcprojw",  "fcprojb",  "lnfw", "lnfb"};
  return names;
}

std::array<int64_t, kNumParamTensors> param_sizes(const Config& c) {
  const int64_t C = c.C, L = c.L;
  return {int64_t(c.Vp) * C,
          int64_t(c.maxT) * C,
          L * C,
          L * C,
          L * 3 * C * C,
          L * 3 * C,
          L * C * C,
          L * C,
          L * C,
          L * C,
          L * 4 * C * C,
          L * 4 * C,
          L * C * 4 * C,
          L * C,
          C,
          C};
}

int64_t num_params(const Config& c) {
  int64_t n = 0;
  for (int64_t s : param_sizes(c)) n += s;
  return n;
}

ParamLayout::ParamLayout(const Config& c) : size(param_sizes(c)) {
  for (int i = 0; i < kNumParamTensors; ++i) {
    offset[i] = total;
    total += size[i];
  }
}

std::vector<float> init_params(const Config& c, uint64_t seed) {
  c.validate();
  const ParamLayout layout(c);
  std::vector<float> p(layout.total, 0.0f);
  Rng rng(seed, "gpt2-init");
  auto normal = [&](int tensor, double stddev, int64_t count) {
    float* dst = p.data() + layout.offset[tensor];
    for (int64_t i = 0; i < count; i += 2) {  // Box-Muller, two values at a time
      const double u1 = std::max(rng.uniform(0.0, 1.0), 1e-300), u2 = rng.uniform(0.0, 1.0);
      const double r = std::sqrt(-2.0 * std::log(u1)) * stddev;
      dst[i] = float(r * std::cos(2 * M_PI * u2));
      if (i + 1 < count) dst[i + 1] = float(r * std::sin(2 * M_PI * u2));
    }
  };
  const double residual_std = 0.02 / std::sqrt(2.0 * c.L);
  normal(wte, 0.02, int64_t(c.V) * c.C);  // the padded rows stay 0
  normal(wpe, 0.02, layout.size[wpe]);
  for (int t : {qkvw, fcw}) normal(t, 0.02, layout.size[t]);
  for (int t : {attprojw, fcprojw}) normal(t, residual_std, layout.size[t]);
  for (int t : {ln1w, ln2w, lnfw}) std::fill_n(p.data() + layout.offset[t], layout.size[t], 1.0f);
  return p;
}

Checkpoint read_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the model " + path + ": no such file or not readable");
  std::array<int32_t, kHeaderInts> header{};
  in.read(reinterpret_cast<char*>(header.data()), sizeof(header));
  if (!in) throw UsageError(path + ": truncated model file (no complete 1024-byte header)");
  if (header[0] != kModelMagic)
    throw UsageError(path + ": not an llm.c model file (magic " + std::to_string(header[0]) + ", expected " +
                     std::to_string(kModelMagic) + ")");
  if (header[1] != kModelVersion)
    throw UsageError(path + ": model file version " + std::to_string(header[1]) + ", this trainer reads version " +
                     std::to_string(kModelVersion) + " (fp32, padded vocabulary)");
  Checkpoint ck;
  ck.config.maxT = header[2];
  ck.config.V = header[3];
  ck.config.L = header[4];
  ck.config.NH = header[5];
  ck.config.C = header[6];
  ck.config.Vp = header[7];
  try {
    ck.config.validate();
  } catch (const UsageError& e) {
    throw UsageError(path + ": " + e.what());
  }
  const int64_t n = num_params(ck.config);
  ck.params.resize(n);
  in.read(reinterpret_cast<char*>(ck.params.data()), std::streamsize(n * sizeof(float)));
  if (in.gcount() != std::streamsize(n * sizeof(float)))
    throw UsageError(path + ": truncated model file: " + std::to_string(in.gcount() / 4) + " of " + std::to_string(n) +
                     " parameters for " + ck.config.describe());
  return ck;
}

void write_checkpoint(const std::string& path, const Config& c, const float* params) {
  std::array<int32_t, kHeaderInts> header{};
  header[0] = kModelMagic;
  header[1] = kModelVersion;
  header[2] = c.maxT;
  header[3] = c.V;
  header[4] = c.L;
  header[5] = c.NH;
  header[6] = c.C;
  header[7] = c.Vp;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), sizeof(header));
  out.write(reinterpret_cast<const char*>(params), std::streamsize(num_params(c) * sizeof(float)));
  if (!out) throw UsageError("cannot write the model " + path);
}

}  // namespace wb::trainer
