#include "workbench/runtime/torch_rung.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "base/errors.h"
#include "base/files.h"
#include "contract/registry.h"
#include "device/python/serve_process.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

python::ServeProcess& server() {
  static python::ServeProcess process("tools/torch/serve.py", "PyTorch",
                                      "bash tools/python/venv.sh makes the project's venv with torch (docs/python.md)");
  return process;
}

std::string file_of(const TensorSpec& t) { return t.name + ".bin"; }

// The table's bytes of a tensor, wherever the executor keeps them.
std::string download(Executor& ex, const void* data, std::size_t bytes) {
  std::string out(bytes, '\0');
  if (bytes) ex.to_host(out.data(), data, bytes);
  return out;
}

}  // namespace

TorchCall::TorchCall(const Variant& v, const TensorTable& table, const ParamValues& params, Executor& ex)
    : variant_(v), table_(table), ex_(ex), lock_(server().mutex()) {
  if (ex.backend() != Backend::cpu && ex.backend() != Backend::cuda)
    throw Unsupported("a PyTorch rung runs on cpu and cuda, not on " + std::string(to_string(ex.backend())));
  char name[] = "/tmp/wb-torch-XXXXXX";
  if (!::mkdtemp(name)) throw std::runtime_error(std::string("torch: a folder in /tmp: ") + std::strerror(errno));
  scratch_ = name;

  const OpSpec& op = table.op();
  const Shape& shape = table.shape();
  nlohmann::json call{{"schema", "wb.torch_call/1"},
                      {"rung", std::string(WB_SOURCE_DIR) + "/" + v.source},
                      {"kind", v.id == kTorchCompileId ? "compile" : "eager"},
                      {"device", std::string(to_string(ex.backend()))},
                      {"threads", params.find("threads").value_or(0)}};
  for (const std::string& d : Shape::dim_names()) call["shape"][d] = shape.get(d);
  call["scalars"] = nlohmann::json::object();
  for (const ScalarSpec& s : op.scalars) call["scalars"][s.name] = table.scalar(s.name);
  call["tensors"] = nlohmann::json::array();
  for (std::size_t i = 0; i < op.tensors.size(); ++i) {
    const TensorSpec& t = op.tensors[i];
    nlohmann::json entry{{"name", t.name},
                         {"role", std::string(to_string(t.role))},
                         {"dtype", std::string(to_string(t.dtype))},
                         {"dims", t.dims(shape)}};
    if (!table.data(i)) {
      entry["null"] = true;  // an optional tensor left out: the rung gets None
    } else {
      entry["file"] = (scratch_ / file_of(t)).string();
      write_file_atomically(scratch_ / file_of(t), download(ex, table.data(i), t.bytes(shape)));
    }
    call["tensors"].push_back(std::move(entry));
  }
  write_file_atomically(scratch_ / "call.json", call.dump() + "\n");
  ask("prepare " + (scratch_ / "call.json").string());
}

TorchCall::~TorchCall() {
  std::error_code ec;
  fs::remove_all(scratch_, ec);
}

std::string TorchCall::ask(const std::string& request) {
  const std::string answer = server().ask(request);
  if (answer.rfind("ok", 0) == 0) return answer.size() > 3 ? answer.substr(3) : "";
  if (answer.rfind("failed: ", 0) == 0)
    throw std::runtime_error(variant_.key() + " under PyTorch: " + answer.substr(8));
  throw std::logic_error("torch: serve.py refused wb's request '" + request + "' for " + variant_.key() + ": " +
                         answer);
}

void TorchCall::run() {
  ask("run");
  ask("fetch");
  const OpSpec& op = table_.op();
  for (std::size_t i = 0; i < op.tensors.size(); ++i) {
    const TensorSpec& t = op.tensors[i];
    if (t.role == Role::input || !table_.data(i)) continue;
    std::ifstream in(scratch_ / file_of(t), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t want = t.bytes(table_.shape());
    if (bytes.size() != want)
      throw std::logic_error("torch: serve.py left " + std::to_string(bytes.size()) + " bytes of '" + t.name +
                             "', not " + std::to_string(want));
    if (want) ex_.to_device(table_.data(i), bytes.data(), want);
  }
}

double TorchCall::time() {
  const std::string seconds = ask("time");
  char* end = nullptr;
  const double s = std::strtod(seconds.c_str(), &end);
  if (end == seconds.c_str() || !(s >= 0)) throw std::logic_error("torch: serve.py timed '" + seconds + "'");
  return s;
}

std::string torch_version() {
  const std::string greeting = server().greeting();  // "torch 2.11.0 threads 2"
  const std::string_view head = "torch ";
  if (greeting.rfind(head, 0) != 0) return greeting;
  return greeting.substr(head.size(), greeting.find(' ', head.size()) - head.size());
}

}  // namespace wb
