#include "contract/registry.h"

#include <algorithm>
#include <regex>
#include <set>
#include <stdexcept>

#include "base/errors.h"
#include "contract/catalogue.h"
#include "contract/registry_table.h"

namespace wb {
namespace {

std::string hash_of(const std::string& path) {
  for (const auto& h : source_hashes())
    if (path == h.path) return h.sha256;
  return "";
}

[[noreturn]] void reject(const Variant& v, const std::string& why) {
  throw std::logic_error("registry: " + v.key() + " (" + v.source + "): " + why);
}

// A variant made by the factory of its file: what the path says (op, id, name) is
// filled in, or checked where the factory states it too; `backend` is the one it
// registers on, as the path says (emu for the emulator's build of a CUDA file).
Variant from_file(const VariantFactory& factory, Backend backend) {
  Variant v = factory.make();
  v.source = factory.source;
  v.source_hash = hash_of(v.source);
  const VariantFile file = parse_variant_file(v.source);
  auto fill = [&](auto& field, const auto& value, const char* what, const std::string& text) {
    if (field == std::decay_t<decltype(field)>{}) field = value;
    if (field != value) reject(v, std::string("its factory says ") + what + " " + text + ", its file name another");
  };
  fill(v.op, file.op, "op", v.op);
  fill(v.id, file.id, "id", std::to_string(v.id));
  fill(v.name, file.name, "name", v.name);
  v.backend = backend;  // cpu for cpu_NN_*.cpp, cuda for NN_*.cu (emu for the emulator's build of one)
  if (backend == Backend::emu && !v.run) {
    // A variant the emulator cannot run (it names why) leaves its launcher out of the
    // emulator's build: this stub stands in, never called (the harness and the kernel
    // plan refuse the variant first, can_run.h).
    if (v.not_emulated.empty()) reject(v, "has nothing to run in the emulator and does not say why");
    const std::string what = v.key() + " is not emulated: " + v.not_emulated;
    v.run = [what](const void*, const Launch&) { throw std::logic_error(what); };
  }
  return v;
}

}  // namespace

VariantFile parse_variant_file(std::string_view path) {
  static const std::regex pattern(R"(^variants/([a-z0-9_]+)/(cpu_)?([0-9]+)_([a-z0-9_]+)\.(cu|cpp)$)");
  std::cmatch m;
  if (!std::regex_match(path.begin(), path.end(), m, pattern))
    throw std::logic_error("registry: '" + std::string(path) +
                           "' is not named variants/<op>/NN_name.cu or variants/<op>/cpu_NN_name.cpp");
  const Backend b = m[2].matched ? Backend::cpu : Backend::cuda;
  if ((b == Backend::cpu) != (m[5].str() == "cpp"))
    throw std::logic_error("registry: '" + std::string(path) +
                           "': CPU variants are .cpp files named cpu_NN_*, CUDA ones .cu");
  return VariantFile{m[1].str(), b, std::stoi(m[3].str()), m[4].str()};
}

Registry::Registry(std::vector<const OpSpec*> ops) : ops_(std::move(ops)) {}

const Registry& Registry::global() {
  static const Registry registry = [] {
    Registry r(all_ops());
    for (const auto& factory : reference_factories()) {
      for (Variant ref : factory.make()) {
        ref.source = factory.source;
        ref.source_hash = hash_of(ref.source);
        if (ref.backend != Backend::cpu || ref.id != 1 || ref.name != "reference")
          reject(ref, "a reference file registers CPU variant 1, named reference");
        r.add(std::move(ref));
      }
    }
    for (const OpSpec* op : r.ops())
      if (!r.find(op->name, Backend::cpu, 1))
        throw std::logic_error("registry: " + op->name + " has no CPU reference (reference/*.cpp registers them)");
    for (const auto& factory : variant_factories()) {
      const VariantFile file = parse_variant_file(factory.source);
      r.add(from_file(factory, file.backend));
    }
    // The same CUDA sources compiled for the emulator: backend emu, same ids, files
    // and hashes.
    for (const auto& factory : emu_variant_factories()) {
      if (parse_variant_file(factory.source).backend != Backend::cuda)
        throw std::logic_error(std::string("registry: ") + factory.source + ": the emulator builds CUDA files only");
      r.add(from_file(factory, Backend::emu));
    }
    return r;
  }();
  return registry;
}

void Registry::add(Variant v) {
  const OpSpec* spec = find_op(v.op);
  if (!spec) reject(v, "unknown op");
  if (v.args_type != spec->args_type()) reject(v, "takes another argument struct than " + spec->name);
  if (v.id < 1) reject(v, "ids start at 1");
  if (find(v.op, v.backend, v.id)) reject(v, "id registered twice");
  if (v.name.empty() || v.summary.empty()) reject(v, "needs a name and a summary");
  if (!v.run) reject(v, "has nothing to run");
  std::set<std::string> names;
  for (const auto& p : v.params) {
    if (p.values.empty()) reject(v, "launch parameter " + p.name + " has no legal values");
    if (std::find(p.values.begin(), p.values.end(), p.default_value) == p.values.end())
      reject(v, "default " + p.name + " " + std::to_string(p.default_value) + " is not among its legal values");
    if (!names.insert(p.name).second) reject(v, "launch parameter " + p.name + " declared twice");
  }
  for (const auto& req : v.requirements)
    if (!req.holds) reject(v, "requirement '" + req.text + "' has no check");
  variants_.push_back(std::move(v));
}

const OpSpec* Registry::find_op(std::string_view name) const {
  for (const OpSpec* op : ops_)
    if (op->name == name) return op;
  return nullptr;
}

const OpSpec& Registry::op(std::string_view name) const {
  if (const OpSpec* op = find_op(name)) return *op;
  std::string legal;
  for (const OpSpec* o : ops_) legal += (legal.empty() ? "" : ", ") + o->name;
  throw UsageError("unknown op '" + std::string(name) + "' (ops: " + legal + ")");
}

std::vector<const Variant*> Registry::variants(std::string_view op) const {
  std::vector<const Variant*> out;
  for (const auto& v : variants_)
    if (v.op == op) out.push_back(&v);
  std::sort(out.begin(), out.end(), [](const Variant* a, const Variant* b) {
    return std::make_pair(a->backend, a->id) < std::make_pair(b->backend, b->id);
  });
  return out;
}

std::vector<const Variant*> Registry::variants(std::string_view op, Backend b) const {
  std::vector<const Variant*> out;
  for (const Variant* v : variants(op))
    if (v->backend == b) out.push_back(v);
  return out;
}

const Variant* Registry::find(std::string_view op, Backend b, int id) const {
  for (const auto& v : variants_)
    if (v.op == op && v.backend == b && v.id == id) return &v;
  return nullptr;
}

const Variant& Registry::reference(std::string_view op_name) const {
  const OpSpec& spec = op(op_name);
  if (const Variant* v = find(spec.name, Backend::cpu, 1)) return *v;
  throw std::logic_error("registry: " + spec.name + " has no CPU reference");
}

void Registry::run_reference(const OpSpec& spec, const Shape& shape, std::vector<void*> tensors) const {
  const TensorTable table(spec, shape, std::move(tensors));
  spec.invoke(reference(spec.name), table, Launch{});
}

const Variant& Registry::variant(std::string_view op_name, Backend b, int id) const {
  const OpSpec& spec = op(op_name);  // unknown op first
  if (const Variant* v = find(op_name, b, id)) return *v;
  auto list = [&](Backend backend) {
    std::string ids;
    for (const Variant* v : variants(spec.name, backend))
      ids += (ids.empty() ? "" : ", ") + std::to_string(v->id) + " " + v->name;
    return ids.empty() ? std::string("none in this build") : ids;
  };
  std::string msg = "unknown variant " + std::to_string(id) + " of " + spec.name + " on " + std::string(to_string(b)) +
                    " (" + std::string(to_string(b)) + " variants: " + list(b);
  for (Backend other : {Backend::cpu, Backend::cuda, Backend::emu})
    if (other != b) msg += "; " + std::string(to_string(other)) + " variants: " + list(other);
  msg += ")";
  throw UsageError(msg);
}

}  // namespace wb
