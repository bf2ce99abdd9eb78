#include "contract/shape.h"

#include <charconv>
#include <set>

#include "base/checked.h"
#include "base/errors.h"
#include "base/text.h"

namespace wb {
namespace {

int64_t* field(Shape& s, std::string_view dim) {
  if (dim == "B") return &s.B;
  if (dim == "T") return &s.T;
  if (dim == "C") return &s.C;
  if (dim == "NH") return &s.NH;
  if (dim == "V") return &s.V;
  if (dim == "Vp") return &s.Vp;
  if (dim == "OC") return &s.OC;
  if (dim == "L") return &s.L;
  if (dim == "N") return &s.N;
  return nullptr;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// GPT-2's parameter count in llm.c's layout (see gpt2_parameter_count).
CheckedInt parameter_count(int64_t Vp, int64_t C, int64_t L, int64_t maxT) {
  const CheckedInt c(C);
  const CheckedInt per_layer = c * 2                // ln1 weight, bias
                               + c * c * 3 + c * 3  // qkv
                               + c * c + c          // attention projection
                               + c * 2              // ln2
                               + c * c * 4 + c * 4  // fc
                               + c * c * 4 + c;     // fc projection
  return CheckedInt(Vp) * c + CheckedInt(maxT) * c + CheckedInt(L) * per_layer + c * 2;
}

// Fill the dims that were not given from the ones that were. A derived dim that does
// not fit in 64 bits is a malformed shape, named with the dims it came from.
void derive(Shape& s, const std::set<std::string>& given) {
  auto too_large = [](const std::string& what) {
    return UsageError("malformed shape: " + what + " does not fit in a 64-bit integer");
  };
  if (!given.count("Vp")) {
    if (!(CheckedInt(s.V) + 127).ok()) throw too_large("Vp, V=" + std::to_string(s.V) + " rounded up to 128 (give Vp)");
    s.Vp = round_up(s.V, 128);
  }
  if (!given.count("OC")) {
    const CheckedInt oc = CheckedInt(s.C) * 4;
    if (!oc.ok()) throw too_large("OC = 4*C at C=" + std::to_string(s.C) + " (give OC)");
    s.OC = oc.value();
  }
  if (!given.count("N")) {
    const CheckedInt n = parameter_count(s.Vp, s.C, s.L, s.T);
    if (!n.ok())
      throw too_large("N, GPT-2's parameter count at Vp=" + std::to_string(s.Vp) + " C=" + std::to_string(s.C) +
                      " L=" + std::to_string(s.L) + " T=" + std::to_string(s.T) + " (give N)");
    s.N = n.value();
  }
  if (s.Vp < s.V)
    throw UsageError("malformed shape: Vp=" + std::to_string(s.Vp) + " is smaller than V=" + std::to_string(s.V));
}

Shape base_shape(int64_t B) {
  Shape s;
  s.B = B;
  s.T = 1024;
  s.C = 768;
  s.NH = 12;
  s.V = 50257;
  s.L = 12;
  derive(s, {});
  return s;
}

}  // namespace

int64_t Shape::get(std::string_view dim) const {
  auto* f = field(const_cast<Shape&>(*this), dim);
  if (!f) throw UsageError("unknown shape dim '" + std::string(dim) + "' (legal: " + joined(dim_names()) + ")");
  return *f;
}

void Shape::set(std::string_view dim, int64_t value) {
  auto* f = field(*this, dim);
  if (!f) throw UsageError("unknown shape dim '" + std::string(dim) + "' (legal: " + joined(dim_names()) + ")");
  *f = value;
}

bool Shape::operator==(const Shape& o) const {
  return B == o.B && T == o.T && C == o.C && NH == o.NH && V == o.V && Vp == o.Vp && OC == o.OC && L == o.L && N == o.N;
}

const std::vector<std::string>& Shape::dim_names() {
  static const std::vector<std::string> names{"B", "T", "C", "NH", "V", "Vp", "OC", "L", "N"};
  return names;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names{"gpt2-124m", "llmc-dev"};
  return names;
}

Shape preset_shape(std::string_view name) {
  if (name == "gpt2-124m") return base_shape(4);
  if (name == "llmc-dev") return base_shape(8);
  throw UsageError("unknown shape preset '" + std::string(name) + "' (presets: " + joined(preset_names()) +
                   "; or explicit dims such as B=8,T=1024,C=768)");
}

Shape parse_shape(std::string_view text) {
  const std::string all = trim(text);
  if (all.empty()) throw UsageError("malformed shape: empty (give a preset or dims such as B=8,T=1024,C=768)");
  Shape s = preset_shape("gpt2-124m");
  std::set<std::string> given;
  bool first = true;
  for (const std::string& part : split_list(all)) {
    const std::string item = trim(part);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      if (!first) throw UsageError("malformed shape '" + all + "': '" + item + "' is not of the form DIM=VALUE");
      s = preset_shape(item);  // throws with the list of presets
      first = false;
      continue;
    }
    first = false;
    const std::string key = trim(std::string_view(item).substr(0, eq));
    const std::string value = trim(std::string_view(item).substr(eq + 1));
    if (!field(s, key))
      throw UsageError("malformed shape '" + all + "': unknown dim '" + key +
                       "' (legal: " + joined(Shape::dim_names()) + ")");
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || value.empty())
      throw UsageError("malformed shape '" + all + "': " + key + "='" + value + "' is not an integer");
    if (v <= 0) throw UsageError("malformed shape '" + all + "': " + key + " must be positive");
    if (given.count(key)) throw UsageError("malformed shape '" + all + "': " + key + " given twice");
    s.set(key, v);
    given.insert(key);
  }
  derive(s, given);
  return s;
}

bool same_dims(const Shape& a, const Shape& b, const std::vector<std::string>& dims) {
  for (const auto& d : dims)
    if (a.get(d) != b.get(d)) return false;
  return true;
}

std::string describe(const Shape& s, const std::vector<std::string>& dims) {
  std::string out;
  for (const auto& d : dims) out += (out.empty() ? "" : " ") + d + "=" + std::to_string(s.get(d));
  return out;
}

int64_t gpt2_parameter_count(int64_t Vp, int64_t C, int64_t L, int64_t maxT) {
  const CheckedInt n = parameter_count(Vp, C, L, maxT);
  if (!n.ok())
    throw UsageError("GPT-2's parameter count at Vp=" + std::to_string(Vp) + " C=" + std::to_string(C) +
                     " L=" + std::to_string(L) + " maxT=" + std::to_string(maxT) + " does not fit in 64 bits");
  return n.value();
}

int64_t round_up(int64_t x, int64_t multiple) {
  const CheckedInt up = CheckedInt(x) + (multiple - 1);
  if (!up.ok())
    throw UsageError(std::to_string(x) + " rounded up to a multiple of " + std::to_string(multiple) +
                     " does not fit in 64 bits");
  return up.value() / multiple * multiple;
}

std::vector<CheckShape> named_check_shapes(bool emulated) {
  std::vector<CheckShape> shapes;
  auto add = [&](const char* name, const char* text) { shapes.push_back({name, parse_shape(text)}); };
  if (!emulated) {
    add("tiny", "B=2,T=3,C=8,NH=2,V=11,Vp=16,OC=12,L=1");            // one warp covers everything
    add("odd", "B=3,T=37,C=75,NH=3,V=101,Vp=128,OC=221,L=1");        // nothing a power of two, C % 4 != 0
    add("gpt2", "B=2,T=64,C=768,NH=12,V=1000,Vp=1024,OC=3072,L=1");  // GPT-2 width
    add("vocab", "B=1,T=5,C=96,NH=2,V=50257,OC=384,L=1");            // GPT-2 vocabulary, Vp=50304
    add("long", "B=1,T=130,C=256,NH=2,V=300,OC=520,L=1");            // head size 128, T crosses 64-row tiles
  } else {
    add("tiny", "B=2,T=3,C=8,NH=2,V=11,Vp=16,OC=12,L=1");                // one block covers everything
    add("odd", "B=3,T=37,C=75,NH=3,V=101,Vp=128,OC=221,L=1");            // tails, several blocks, C % 4 != 0
    add("wide", "B=2,T=19,C=1024,NH=8,V=300,Vp=384,OC=96,L=1,N=70001");  // vec4 paths at 8 float4 a lane
    add("long", "B=1,T=130,C=256,NH=2,V=300,Vp=384,OC=64,L=1,N=4099");   // head size 128, T crosses 64-row tiles
    add("vocab", "B=1,T=5,C=96,NH=2,V=50257,OC=384,L=1,N=9001");         // the GPT-2 vocabulary, Vp=50304
    // The edges of the rungs that need C % 8 (and OC % 8): every other extent ragged.
    // C = 168 and C = OC = 136 are multiples of 8 but not of 16 or 32 (a partial last k
    // slab, five or more slabs: every pipeline depth refills), OC = 221 odd, B*T = 129
    // rows (a last row tile of one row at 64 and 128) and 17 (small enough for the
    // sanitized passes, which run ragged8), head sizes 56 and 68, Vp % 32 != 0.
    add("ragged", "B=3,T=43,C=168,NH=3,V=101,Vp=104,OC=221,L=1,N=2053");
    add("ragged8", "B=1,T=17,C=136,NH=2,V=300,Vp=328,OC=136,L=1,N=517");
    // The attention pipelines as launched (head size 64, GPT-2's): at T = 200 the last
    // query tile streams four key tiles of 64 (the last partial, 8 rows), so the default
    // launch refills its buffers twice and three stages refill once; OC = 136 and B*T =
    // 200 give matmul_backward's two products five and seven k slabs.
    add("flash", "B=1,T=200,C=64,NH=1,V=11,Vp=16,OC=136,L=1,N=1031");
    // Small enough for the sanitized passes' attention step (ci/emu_sanitized.sh): head
    // size 32 and T = 40, two key tiles of 32, so that with dq_atomics=1 two blocks add
    // into the same dQ rows.
    add("flash_small", "B=1,T=40,C=64,NH=2,V=11,Vp=16,OC=64,L=1,N=257");
  }
  return shapes;
}

std::vector<Shape> check_shapes() {
  std::vector<Shape> out;
  for (const auto& s : named_check_shapes(false)) out.push_back(s.shape);
  return out;
}

std::vector<Shape> emu_check_shapes() {
  std::vector<Shape> out;
  for (const auto& s : named_check_shapes(true)) out.push_back(s.shape);
  return out;
}

}  // namespace wb
