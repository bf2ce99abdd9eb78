#include "trainer/model.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>

#include "base/checked.h"
#include "base/errors.h"
#include "base/file_header.h"
#include "base/files.h"
#include "workbench/runtime/rng.h"

namespace wb::trainer {
namespace {

constexpr int32_t kModelMagic = 20240326;
constexpr int32_t kModelVersion = 3;      // fp32 parameters
constexpr int32_t kModelVersionBf16 = 5;  // bf16 parameters
constexpr int kHeaderInts = 256;

// Indices into the 16 tensors.
enum : int { wte, wpe, ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb };

// The parameter count in llm.c's layout (param_sizes summed), invalid when it overflows.
CheckedInt checked_param_count(const Config& c) {
  const CheckedInt C(c.C), L(c.L);
  return CheckedInt(c.Vp) * C + CheckedInt(c.maxT) * C + L * (C * C * 12 + C * 13) + C * 2;
}

}  // namespace

void Config::validate() const {
  auto bad = [&](const std::string& why) {
    return UsageError("invalid GPT-2 configuration (" + describe() + "): " + why);
  };
  if (maxT <= 0 || V <= 0 || Vp <= 0 || L <= 0 || NH <= 0 || C <= 0) throw bad("every dimension must be positive");
  if (Vp < V) throw bad("Vp must be at least V");
  if (C % NH != 0) throw bad("C must be divisible by NH");
  // The step counts 4*C channels and 2*L+1 layer calls in int.
  if (C > std::numeric_limits<int>::max() / 4) throw bad("C must be below 2^29 (4*C is counted in 32 bits)");
  if (L > std::numeric_limits<int>::max() / 2 - 1) throw bad("L must be below 2^30");
  const CheckedInt bytes = checked_param_count(*this) * int64_t(sizeof(float));
  if (!bytes.ok()) throw bad("its parameters hold more bytes than 64-bit sizes can count");
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
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UsageError("cannot read the model " + path + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the model " + path + ": no such file or not readable");
  return read_checkpoint(in, path);
}

Checkpoint read_checkpoint(std::istream& in, const std::string& origin) {
  const std::string& path = origin;  // the messages name the file it came from
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  in.seekg(0, std::ios::beg);
  if (!in || end < 0) throw UsageError("cannot read the model " + path + ": not a seekable file");
  const int64_t size = int64_t(end);
  // The version picks the parameters' storage; any other is refused naming both.
  std::string first(kFileHeaderBytes, '\0');
  in.read(first.data(), std::streamsize(first.size()));
  first.resize(std::size_t(in.gcount()));
  int32_t version = 0;  // slot 1, little-endian as the files are (and this host is)
  if (first.size() >= 8) std::memcpy(&version, first.data() + 4, sizeof(version));
  const bool bf16_file = version == kModelVersionBf16;
  const auto header = parse_file_header<int32_t>(
      first,
      {"model file", "an llm.c model file", kModelMagic, bf16_file ? kModelVersionBf16 : kModelVersion,
       " (fp32, padded vocabulary; or version 5, bf16)", ""},
      path);
  Checkpoint ck;
  ck.bf16 = bf16_file;
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
  // The header against the stream's size before anything is allocated: a corrupt or
  // foreign header (L=100000) would otherwise ask for terabytes.
  const int64_t n = num_params(ck.config);
  const int64_t bytes_per = bf16_file ? int64_t(sizeof(bf16)) : int64_t(sizeof(float));
  const std::string described = std::to_string(n) + (bf16_file ? " bf16" : "") + " parameters, ";
  const int64_t expected = int64_t(kFileHeaderBytes) + n * bytes_per;
  if (size < expected)
    throw UsageError(path + ": truncated model file: the header (" + ck.config.describe() + ") describes " +
                     described + std::to_string(expected) + " bytes with the header; the file has " +
                     std::to_string(size));
  if (size > expected)
    throw UsageError(path + ": " + std::to_string(size - expected) + " bytes after the last parameter: the header (" +
                     ck.config.describe() + ") describes " + described + std::to_string(expected) +
                     " bytes with the header");
  ck.params.resize(n);
  std::streamsize got = 0;
  if (bf16_file) {
    std::vector<bf16> stored(n);
    in.read(reinterpret_cast<char*>(stored.data()), std::streamsize(n * bytes_per));
    got = in.gcount();
    for (int64_t i = 0; i < n; ++i) ck.params[i] = to_float(stored[i]);  // exact
  } else {
    in.read(reinterpret_cast<char*>(ck.params.data()), std::streamsize(n * bytes_per));
    got = in.gcount();
  }
  if (got != std::streamsize(n * bytes_per))
    throw UsageError(path + ": truncated model file: " + std::to_string(got / bytes_per) + " of " + std::to_string(n) +
                     " parameters for " + ck.config.describe());
  return ck;
}

namespace {

void write_model_file(const std::string& path, const Config& c, int32_t version, const void* params,
                      std::size_t bytes) {
  std::array<int32_t, kHeaderInts> header{};
  header[0] = kModelMagic;
  header[1] = version;
  header[2] = c.maxT;
  header[3] = c.V;
  header[4] = c.L;
  header[5] = c.NH;
  header[6] = c.C;
  header[7] = c.Vp;
  AtomicFile out(path);  // a failed or interrupted save leaves the previous file, never half of one
  out.write(header.data(), sizeof(header));
  out.write(params, bytes);
  out.commit();
}

}  // namespace

void write_checkpoint(const std::string& path, const Config& c, const float* params) {
  write_model_file(path, c, kModelVersion, params, std::size_t(num_params(c)) * sizeof(float));
}

void write_checkpoint(const std::string& path, const Config& c, const bf16* params) {
  write_model_file(path, c, kModelVersionBf16, params, std::size_t(num_params(c)) * sizeof(bf16));
}

}  // namespace wb::trainer
