#include "trainer/state.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/checked.h"
#include "base/errors.h"
#include "base/file_header.h"
#include "base/files.h"

namespace wb::trainer {
namespace {

constexpr uint64_t kStateMagic = 20261122;
constexpr uint64_t kStateVersion = 1;
constexpr int kHeaderSlots = 128;
constexpr int kChecksumSlot = 2;
constexpr int kFirstReservedSlot = 40;
using Header = std::array<uint64_t, kHeaderSlots>;

// Header slots (state.h lists them).
enum : int {
  kMaxT = 3,
  kV,
  kVp,
  kL,
  kNH,
  kC,
  kB,
  kT,
  kStep,
  kSteps,
  kParams,
  kBatches,
  kNext,
  kTokens,
  kTokensHash,
  kDataRng = 18,
  kSamplerRng = 22,
  kLr = 26,
  kWeightDecay,
  kGradClip,
  kBeta1,
  kBeta2,
  kEps,
  kWarmup,
  kSchedule,
  kFinalLrFrac,
  kSeed,
  kShuffle,
  kPlanHash,
  kStorage,
  kRounding
};
static_assert(kRounding == kFirstReservedSlot - 1, "the named slots end where the reserved ones begin");

uint64_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float bits_float(uint64_t bits) {
  const auto u = uint32_t(bits);
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

Header make_header(const TrainState& s) {
  Header h{};
  h[0] = kStateMagic;
  h[1] = kStateVersion;
  const Config& c = s.config;
  h[kMaxT] = uint64_t(c.maxT), h[kV] = uint64_t(c.V), h[kVp] = uint64_t(c.Vp);
  h[kL] = uint64_t(c.L), h[kNH] = uint64_t(c.NH), h[kC] = uint64_t(c.C);
  const StateSettings& o = s.settings;
  h[kB] = uint64_t(o.B), h[kT] = uint64_t(o.T);
  h[kStep] = uint64_t(s.step);
  h[kSteps] = uint64_t(o.steps);
  h[kParams] = s.params.size();
  h[kBatches] = s.data.order.size();
  h[kNext] = uint64_t(s.data.next);
  h[kTokens] = s.train_tokens;
  h[kTokensHash] = s.train_hash;
  for (int i = 0; i < 4; ++i) h[kDataRng + i] = s.data.rng[i], h[kSamplerRng + i] = s.sampler[i];
  h[kLr] = float_bits(o.lr);
  h[kWeightDecay] = float_bits(o.adamw.weight_decay), h[kGradClip] = float_bits(o.adamw.grad_clip);
  h[kBeta1] = float_bits(o.adamw.beta1), h[kBeta2] = float_bits(o.adamw.beta2), h[kEps] = float_bits(o.adamw.eps);
  h[kWarmup] = uint64_t(o.warmup);
  h[kSchedule] = o.schedule == "cosine" ? 1 : 0;
  h[kFinalLrFrac] = float_bits(o.final_lr_frac);
  h[kSeed] = o.seed;
  h[kShuffle] = o.shuffle ? 1 : 0;
  h[kPlanHash] = s.plan_hash;
  h[kStorage] = s.bf16_params.empty() ? 0 : 1;
  h[kRounding] = o.nearest_rounding ? 1 : 0;
  return h;
}

// The checksum covers everything after its own slot: the rest of the header, then the
// payload in file order.
template <class Payload>
uint64_t checksum(const Header& h, const Payload& payload) {
  Hasher hasher;
  hasher.add(h.data() + kChecksumSlot + 1, (kHeaderSlots - kChecksumSlot - 1) * sizeof(uint64_t));
  payload(hasher);
  return hasher.value();
}

// A header field that must fit an int and be positive (or at least `low`).
int int_field(const Header& h, int slot, const char* name, const std::string& path, int64_t low = 1) {
  const auto v = int64_t(h[slot]);
  if (v < low || v > int64_t(INT32_MAX))
    throw UsageError(path + ": corrupt state file: " + name + " " + std::to_string(v) + " is out of range");
  return int(v);
}

// The header's configuration, options, step, hashes and generators (read_state checks
// its sizes against the file).
void read_header_fields(const Header& h, TrainState& s, const std::string& path) {
  auto corrupt = [&](const std::string& why) { return UsageError(path + ": corrupt state file: " + why); };
  Config& c = s.config;
  c.maxT = int_field(h, kMaxT, "maxT", path), c.V = int_field(h, kV, "V", path), c.Vp = int_field(h, kVp, "Vp", path);
  c.L = int_field(h, kL, "L", path), c.NH = int_field(h, kNH, "NH", path), c.C = int_field(h, kC, "C", path);
  try {
    c.validate();
  } catch (const UsageError& e) {
    throw corrupt(e.what());
  }
  StateSettings& o = s.settings;
  o.B = int_field(h, kB, "B", path), o.T = int_field(h, kT, "T", path);
  o.steps = int_field(h, kSteps, "--steps", path);
  s.step = int_field(h, kStep, "the step", path);
  if (s.step > o.steps)
    throw corrupt("step " + std::to_string(s.step) + " is past the run's --steps " + std::to_string(o.steps));
  o.lr = bits_float(h[kLr]);
  o.adamw.weight_decay = bits_float(h[kWeightDecay]), o.adamw.grad_clip = bits_float(h[kGradClip]);
  o.adamw.beta1 = bits_float(h[kBeta1]), o.adamw.beta2 = bits_float(h[kBeta2]), o.adamw.eps = bits_float(h[kEps]);
  o.warmup = int_field(h, kWarmup, "--warmup", path, 0);
  if (h[kSchedule] > 1) throw corrupt("schedule " + std::to_string(h[kSchedule]) + " is neither 0 nor 1");
  o.schedule = h[kSchedule] == 1 ? "cosine" : "const";
  o.final_lr_frac = bits_float(h[kFinalLrFrac]);
  o.seed = h[kSeed];
  if (h[kShuffle] > 1) throw corrupt("shuffle " + std::to_string(h[kShuffle]) + " is neither 0 nor 1");
  o.shuffle = h[kShuffle] == 1;
  if (h[kRounding] > 1) throw corrupt("rounding " + std::to_string(h[kRounding]) + " is neither 0 nor 1");
  o.nearest_rounding = h[kRounding] == 1;
  s.train_tokens = h[kTokens];
  s.train_hash = h[kTokensHash];
  s.plan_hash = h[kPlanHash];
  for (int i = 0; i < 4; ++i) s.data.rng[i] = h[kDataRng + i], s.sampler[i] = h[kSamplerRng + i];
  if (s.data.rng == Rng::State{} || s.sampler == Rng::State{}) throw corrupt("a generator's state is all zero");
}

}  // namespace

void Hasher::add(const void* data, std::size_t bytes) {
  // FNV-1a over 64-bit words (eight times fewer multiplies than over bytes: the state
  // of a large model is gigabytes), then over the remaining bytes.
  const auto* p = static_cast<const unsigned char*>(data);
  length_ += bytes;
  for (; bytes >= 8; bytes -= 8, p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h_ = (h_ ^ w) * 0x100000001b3ull;
  }
  for (; bytes > 0; --bytes, ++p) h_ = (h_ ^ *p) * 0x100000001b3ull;
}

uint64_t Hasher::value() const {
  // Mix in the length and spread the last word's bits (a final splitmix step).
  uint64_t z = h_ ^ (uint64_t(length_) * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t hash_tokens(const std::vector<int32_t>& tokens) {
  Hasher h;
  h.add(tokens.data(), tokens.size() * sizeof(int32_t));
  return h.value();
}

void write_state(const std::string& path, const TrainState& s) {
  if (s.m.size() != s.params.size() || s.v.size() != s.params.size())
    throw std::logic_error("write_state: the moments and the parameters differ in size");
  if (!s.bf16_params.empty() && s.bf16_params.size() != s.params.size())
    throw std::logic_error("write_state: the bf16 parameters and the master weights differ in size");
  const auto halves = s.bf16_params.size() * sizeof(bf16);
  const auto floats = s.params.size() * sizeof(float);
  const auto order_bytes = s.data.order.size() * sizeof(int64_t);
  Header h = make_header(s);
  h[kChecksumSlot] = checksum(h, [&](Hasher& x) {
    x.add(s.data.order.data(), order_bytes);
    x.add(s.params.data(), floats);
    x.add(s.m.data(), floats);
    x.add(s.v.data(), floats);
    x.add(s.bf16_params.data(), halves);
  });
  AtomicFile out(path);  // a kill or a full disk mid-write leaves the previous state
  out.write(h.data(), sizeof(h));
  out.write(s.data.order.data(), order_bytes);
  out.write(s.params.data(), floats);
  out.write(s.m.data(), floats);
  out.write(s.v.data(), floats);
  out.write(s.bf16_params.data(), halves);
  out.commit();
}

TrainState read_state(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the state " + path + ": no such file or not readable");
  const Header h = read_file_header<uint64_t>(in,
                                              {"state file", "a trainer state file", kStateMagic, kStateVersion, "",
                                               "; --save writes a model file, --state a state file"},
                                              path);
  auto corrupt = [&](const std::string& why) { return UsageError(path + ": corrupt state file: " + why); };
  for (int i = kFirstReservedSlot; i < kHeaderSlots; ++i)
    if (h[i] != 0) throw corrupt("reserved header slot " + std::to_string(i) + " is not zero");

  TrainState s;
  read_header_fields(h, s, path);
  const Config& c = s.config;

  // The header against the file's size before anything is allocated: a flipped count
  // would otherwise ask for terabytes.
  const int64_t n = num_params(c);
  if (h[kParams] != uint64_t(n))
    throw corrupt("the header holds " + std::to_string(h[kParams]) + " parameters, its configuration (" + c.describe() +
                  ") has " + std::to_string(n));
  if (h[kBatches] == 0 || h[kBatches] > uint64_t(INT64_MAX / 8))
    throw corrupt(std::to_string(h[kBatches]) + " batches per pass");
  const auto batches = int64_t(h[kBatches]);
  if (h[kNext] > h[kBatches])
    throw corrupt("the next batch " + std::to_string(h[kNext]) + " is past the " + std::to_string(batches) +
                  " batches of a pass");
  s.data.next = int64_t(h[kNext]);
  if (h[kStorage] > 1) throw corrupt("parameter storage " + std::to_string(h[kStorage]) + " is neither 0 nor 1");
  const bool bf16_state = h[kStorage] == 1;
  const CheckedInt expected_size = CheckedInt(int64_t(sizeof(h))) + CheckedInt(batches) * 8 +
                                   CheckedInt(n) * 3 * int64_t(sizeof(float)) +
                                   CheckedInt(n) * (bf16_state ? int64_t(sizeof(bf16)) : 0);
  if (!expected_size.ok()) throw corrupt("its sizes overflow 64 bits");
  const int64_t expected = expected_size.value();
  std::error_code ec;
  const auto size = int64_t(std::filesystem::file_size(path, ec));
  if (ec) throw UsageError("cannot read the state " + path + ": " + ec.message());
  const std::string described = "the header (" + c.describe() + ", " + std::to_string(batches) + " batches per pass" +
                                (bf16_state ? ", bf16" : "") + ") describes " + std::to_string(expected) + " bytes";
  if (size < expected)
    throw UsageError(path + ": truncated state file: " + described + ", the file has " + std::to_string(size));
  if (size > expected)
    throw UsageError(path + ": " + std::to_string(size - expected) + " bytes after the end of the state: " + described);

  s.data.order.resize(std::size_t(batches));
  s.params.resize(std::size_t(n));
  s.m.resize(std::size_t(n));
  s.v.resize(std::size_t(n));
  if (bf16_state) s.bf16_params.resize(std::size_t(n));
  const auto halves = std::streamsize(s.bf16_params.size() * sizeof(bf16));
  const auto floats = std::streamsize(n * sizeof(float));
  in.read(reinterpret_cast<char*>(s.data.order.data()), std::streamsize(batches * 8));
  in.read(reinterpret_cast<char*>(s.params.data()), floats);
  in.read(reinterpret_cast<char*>(s.m.data()), floats);
  in.read(reinterpret_cast<char*>(s.v.data()), floats);
  in.read(reinterpret_cast<char*>(s.bf16_params.data()), halves);
  if (!in) throw UsageError(path + ": truncated state file (it shrank while being read)");
  const uint64_t sum = checksum(h, [&](Hasher& x) {
    x.add(s.data.order.data(), std::size_t(batches * 8));
    x.add(s.params.data(), std::size_t(floats));
    x.add(s.m.data(), std::size_t(floats));
    x.add(s.v.data(), std::size_t(floats));
    x.add(s.bf16_params.data(), std::size_t(halves));
  });
  if (sum != h[kChecksumSlot])
    throw corrupt("the checksum does not match its contents (a damaged copy, or changed after it was written)");
  return s;
}

}  // namespace wb::trainer
