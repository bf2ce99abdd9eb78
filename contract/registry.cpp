#include "contract/registry.h"

#include <cxxabi.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <typeindex>
#include <utility>

#include "base/errors.h"
#include "contract/catalogue.h"
#include "contract/registry_table.h"
#include "contract/variant_errors.h"

namespace wb {
namespace {

std::string hash_of(const std::string& path) {
  for (const auto& h : source_hashes())
    if (path == h.path) return h.sha256;
  return "";
}

// A mistake in the variant's file: bad input, the message names the file and the fix.
[[noreturn]] void reject(const Variant& v, const std::string& why) {
  throw VariantFileError("registry: " + v.key() + (v.source.empty() ? "" : " (" + v.source + ")") + ": " + why);
}

// A broken invariant of wb's own files (its references): a bug in wb.
[[noreturn]] void internal(const Variant& v, const std::string& why) {
  throw std::logic_error("registry: " + v.key() + " (" + v.source + "): " + why);
}

// "wb::GeluForwardArgs" for a type's mangled name (the one a user writes).
std::string type_name(std::type_index t) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status),
                                                        std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(t.name());
}

// What to write in a factory to declare the launch parameter `name`.
std::string declaration_of(const std::string& name) {
  if (name == "block_size") return "v.params = {block_size_param()};";
  if (name == "threads") return "v.params = {cpu::threads_param()};";
  return "v.params.push_back({\"" + name + "\", {<legal values>}, <default>});";
}

// fn (the variant's launcher, launch limit, workspace or determinism claim) with a
// launch parameter it reads and its factory never declared reported as the file's
// mistake rather than as wb's bug or a wrong result.
template <class R, class... A>
std::function<R(A...)> own_params_only(std::function<R(A...)> fn, const std::string& where, const char* what) {
  if (!fn) return fn;
  return [fn = std::move(fn), where, what](A... a) -> R {
    try {
      return fn(std::forward<A>(a)...);
    } catch (const MissingLaunchParam& e) {
      throw VariantFileError("registry: " + where + ": its " + what + " reads the launch parameter '" + e.name +
                             "', which its factory does not declare: add `" + declaration_of(e.name) +
                             "` to the factory (or stop reading it)");
    }
  };
}

// A variant made by the factory of its file: what the path says (op, id, name) is
// filled in, or checked where the factory states it too; `backend` is the one it
// registers on, as the path says (emu for the emulator's build of a CUDA file).
Variant from_file(Variant (*make)(), const std::string& source, Backend backend) {
  Variant v = make();
  v.source = source;
  // A Triton rung states its own identity (its file and the Triton version,
  // tools/triton/cxx.py): wb_identity's table hashes C++ files only.
  if (std::string hash = hash_of(v.source); !hash.empty() || v.source_hash.empty()) v.source_hash = hash;
  const VariantFile file = parse_variant_file(v.source);
  auto text_of = [](const auto& x) {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, int>)
      return std::to_string(x);
    else
      return std::string(x);
  };
  auto fill = [&](auto& field, const auto& value, const char* what, const std::string& text) {
    if (field == std::decay_t<decltype(field)>{}) field = value;
    if (field != value)
      reject(v, std::string("its factory sets ") + what + " " + text + ", its file name says " + text_of(value) +
                    ": the file name decides; remove that line from the factory (or rename the file)");
  };
  fill(v.op, file.op, "op", v.op);
  fill(v.id, file.id, "id", std::to_string(v.id));
  fill(v.name, file.name, "name", v.name);
  v.backend = backend;  // cpu for cpu_NN_*.cpp, cuda for NN_*.cu (emu for the emulator's build of one)
  const std::string where = v.key() + " (" + v.source + ")";
  v.run = own_params_only(std::move(v.run), where, "launcher");
  v.launch_limit = own_params_only(std::move(v.launch_limit), where, "launch_limit");
  v.workspace = own_params_only(std::move(v.workspace), where, "workspace");
  v.deterministic = own_params_only(std::move(v.deterministic), where, "deterministic");
  if (backend == Backend::emu && !v.run) {
    // A variant the emulator cannot run (it names why) leaves its launcher out of the
    // emulator's build: this stub stands in, never called (the harness and the kernel
    // plan refuse the variant first, can_run.h).
    if (v.not_emulated.empty())
      reject(v,
             "has nothing to run in the emulator and does not say why: set v.not_emulated to the reason "
             "(\"needs cuDNN\") in its factory");
    const std::string what = v.key() + " is not emulated: " + v.not_emulated;
    v.run = [what](const void*, const Launch&) { throw std::logic_error(what); };
  }
  return v;
}

}  // namespace

// A PyTorch rung of `op` from its file (docs/torch.md). Its launcher is never called:
// the harness runs it through PyTorch's process on the op's tensors by name
// (workbench/runtime/torch_rung.h); the trainer never selects it.
Variant torch_rung_variant(const OpSpec& op, const TorchRungFile& file, Backend b, bool compiled) {
  Variant v;
  v.op = op.name;
  v.backend = b;
  v.id = compiled ? kTorchCompileId : kTorchEagerId;
  v.name = compiled ? "torch_compile" : "torch_eager";
  std::string summary = file.summary;
  if (!summary.empty() && summary.back() == '.') summary.pop_back();
  v.summary = summary + (compiled ? " (torch.compile)" : " (eager)");
  // Held to the op's own contract, as a hand-written rung of it: fp32 arithmetic, each
  // stored bf16 output rounded once (the looser bf16 class is for tensor-core products).
  v.numeric = NumericClass::fp32;
  // On cpu the thread count PyTorch runs with (torch.set_num_threads), swept like every
  // CPU rung's: 1, 2, 4, ... and the machine's OpenMP maximum, as device/cpu/threads.h's
  // threads_param (which contract/ does not include).
  if (b == Backend::cpu) {
    const int most = std::max(1, omp_get_max_threads());
    TuningParam threads{"threads", {}, most};
    for (int n = 1; n < most; n *= 2) threads.values.push_back(n);
    threads.values.push_back(most);
    v.params = {threads};
  }
  // PyTorch's CUDA kernels make no promise of run-to-run equality (atomics in
  // index_add_ and in some reductions). On the host eager keeps one order per thread
  // count; torch.compile's C++ on more than one thread does not (encoder_backward's
  // index_add became atomic adds: two runs at B=3 T=37 on 2 threads differed in dwte).
  if (b == Backend::cuda) v.deterministic = [](const ParamValues&) { return false; };
  if (b == Backend::cpu && compiled)
    v.deterministic = [](const ParamValues& p) { return p.find("threads").value_or(1) == 1; };
  v.args_type = op.args_type();
  const std::string key = v.op + " " + std::string(to_string(b)) + "/" + std::to_string(v.id);
  v.run = [key](const void*, const Launch&) {
    throw std::logic_error(key +
                           " is a PyTorch rung: it runs in PyTorch's process on the op's tensors "
                           "(workbench/runtime/torch_rung.h), never from an argument struct");
  };
  v.source = file.source;
  v.source_hash = file.identity;
  return v;
}

Variant variant_from_file(Variant (*make)(), const std::string& source, Backend b) {
  return from_file(make, source, b);
}

VariantFile parse_variant_file(std::string_view path) {
  // A Triton rung (NN_triton_name.py, docs/triton.md) is a CUDA variant of its op.
  static const std::regex triton(R"(^variants/([a-z0-9_]+)/([0-9]+)_(triton_[a-z0-9_]+)\.py$)");
  std::cmatch m;
  if (std::regex_match(path.begin(), path.end(), m, triton))
    return VariantFile{m[1].str(), Backend::cuda, std::stoi(m[2].str()), m[3].str()};
  static const std::regex pattern(R"(^variants/([a-z0-9_]+)/(cpu_)?([0-9]+)_([a-z0-9_]+)\.(cu|cpp)$)");
  if (!std::regex_match(path.begin(), path.end(), m, pattern))
    throw std::logic_error("registry: '" + std::string(path) +
                           "' is not named variants/<op>/NN_name.cu or variants/<op>/cpu_NN_name.cpp");
  const Backend b = m[2].matched ? Backend::cpu : Backend::cuda;
  if ((b == Backend::cpu) != (m[5].str() == "cpp"))
    throw std::logic_error("registry: '" + std::string(path) +
                           "': CPU variants are .cpp files named cpu_NN_*, CUDA ones .cu");
  return VariantFile{m[1].str(), b, std::stoi(m[3].str()), m[4].str()};
}

bool is_triton_rung(const Variant& v) {
  return v.source.size() > 3 && v.source.compare(v.source.size() - 3, 3, ".py") == 0 && !is_torch_rung(v);
}

bool is_torch_rung(const Variant& v) { return is_torch_rung_file(v.source); }

Registry::Registry(std::vector<const OpSpec*> ops) : ops_(std::move(ops)) {}

const Registry& Registry::global() {
  static const Registry registry = [] {
    Registry r(all_ops());
    for (const auto& factory : reference_factories()) {
      for (Variant ref : factory.make()) {
        ref.source = factory.source;
        ref.source_hash = hash_of(ref.source);
        if (ref.backend != Backend::cpu || ref.id != 1 || ref.name != "reference")
          internal(ref, "a reference file registers CPU variant 1, named reference");
        r.add(std::move(ref));
      }
    }
    for (const OpSpec* op : r.ops())
      if (!r.find(op->name, Backend::cpu, 1))
        throw std::logic_error("registry: " + op->name + " has no CPU reference (reference/*.cpp registers them)");
    for (const auto& factory : variant_factories()) {
      const VariantFile file = parse_variant_file(factory.source);
      r.add(from_file(factory.make, factory.source, file.backend));
    }
    for (const TorchRungFile& file : torch_rung_files())
      for (Backend b : {Backend::cpu, Backend::cuda}) {
        if (b == Backend::cuda && !WB_HAVE_CUDA) continue;
        const OpSpec* op = r.find_op(file.op);
        if (!op)
          throw VariantFileError(std::string("registry: ") + file.source + ": variants/" + file.op +
                                 "/ is no op's folder: a PyTorch rung lies in its op's folder");
        for (bool compiled : {false, true}) r.add(torch_rung_variant(*op, file, b, compiled));
      }
    // The same CUDA sources compiled for the emulator: backend emu, same ids, files
    // and hashes.
    for (const auto& factory : emu_variant_factories()) {
      if (parse_variant_file(factory.source).backend != Backend::cuda)
        throw std::logic_error(std::string("registry: ") + factory.source + ": the emulator builds CUDA files only");
      r.add(from_file(factory.make, factory.source, Backend::emu));
    }
    return r;
  }();
  return registry;
}

void Registry::add(Variant v) {
  const OpSpec* spec = find_op(v.op);
  if (!spec) {
    std::string legal;
    for (const OpSpec* o : ops_) legal += (legal.empty() ? "" : ", ") + o->name;
    reject(v, "variants/" + v.op + "/ is no op's folder: move the file into the folder of the op it implements (" +
                  legal + ")");
  }
  if (v.args_type != spec->args_type()) {
    std::string why = "its launcher takes " + type_name(v.args_type) + ", but " + spec->name + " takes " +
                      type_name(spec->args_type());
    const OpSpec* owner = nullptr;
    for (const OpSpec* o : ops_)
      if (o->args_type() == v.args_type) owner = o;
    if (owner)
      why += ": " + type_name(v.args_type) + " is " + owner->name +
             "'s argument struct, so the file belongs in variants/" + owner->name +
             "/ (with that folder's next free id, " + std::to_string(next_free_id(owner->name, v.backend)) +
             "), or its launcher should take const " + type_name(spec->args_type()) + "&";
    else
      why += ": make its launcher take const " + type_name(spec->args_type()) + "&";
    reject(v, why);
  }
  if (v.id < 1) reject(v, "ids start at 1");
  if (const Variant* other = find(v.op, v.backend, v.id))
    reject(v, "id " + std::to_string(v.id) + " is taken twice in variants/" + v.op + "/, by " +
                  (other->source.empty() ? other->key() : other->source) + " and by this file: give the newer one " +
                  "the next free id, " + std::to_string(next_free_id(v.op, v.backend)) +
                  " (rename the file; ids are never renumbered)");
  if (v.name.empty() || v.summary.empty()) reject(v, "needs a name and a summary: set v.summary in its factory");
  if (!v.run) reject(v, "has nothing to run: its factory starts from Variant::of(&launch)");
  std::set<std::string> names;
  for (const auto& p : v.params) {
    if (p.values.empty()) reject(v, "launch parameter " + p.name + " has no legal values");
    if (std::find(p.values.begin(), p.values.end(), p.default_value) == p.values.end())
      reject(v, "default " + p.name + " " + std::to_string(p.default_value) + " is not among its legal values (" +
                    describe_values(p.values) + ")");
    if (!names.insert(p.name).second) reject(v, "launch parameter " + p.name + " declared twice");
  }
  for (const auto& req : v.requirements)
    if (!req.holds) reject(v, "requirement '" + req.text + "' has no check: give it a function of the shape");
  variants_.push_back(std::move(v));
}

int Registry::next_free_id(std::string_view op, Backend b) const {
  int id = 1;
  for (const auto& v : variants_)
    if (v.op == op && v.backend == b && !is_torch_rung(v)) id = std::max(id, v.id + 1);
  // And every file of this build, registered yet or not (the global registry adds them
  // in the order of their paths, so a message about gelu_forward/ comes before
  // gelu_forward_bf16/'s files are in).
  const Backend file_backend = b == Backend::emu ? Backend::cuda : b;
  for (const auto& factory : variant_factories()) {
    const VariantFile file = parse_variant_file(factory.source);
    if (file.op == op && file.backend == file_backend) id = std::max(id, file.id + 1);
  }
  return id;
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
