#pragma once
// One Python tool serving wb's requests, a line each way: started on first use, asked
// one request at a time (under a mutex), ended with wb (its stdin closes, it exits).
// The Triton interpreter (tools/triton/interpret.py --serve) and the PyTorch rungs
// (tools/torch/serve.py --serve) are both served so: Python, torch and triton start
// once per wb process instead of once per call.
//
// The tool runs under the project's Python (tools/python/python.sh), its stderr in a
// log whose tail is quoted when it dies; its first line is "ready ..." or
// "unavailable: why".
#include <mutex>
#include <string>

namespace wb::python {

class ServeProcess {
 public:
  // tool: the script, relative to the repository ("tools/torch/serve.py"); what: how a
  // message names it ("the Triton interpreter"); fix: what makes it available, quoted
  // when it is not ("bash tools/python/venv.sh makes the project's venv with triton").
  ServeProcess(std::string tool, std::string what, std::string fix);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // The answer line to `request` (one line, no newline). Throws Unsupported when the
  // tool cannot run here (no venv: the reason names the fix), std::runtime_error when it
  // died (the tail of its log in the message).
  std::string ask(const std::string& request);
  // Its greeting after "ready " ("torch 2.11.0 threads 2"), starting it if need be.
  std::string greeting();
  // Serialises a sequence of requests that belong together (prepare, run, fetch).
  std::mutex& mutex() { return mutex_; }

 private:
  void start();
  void stop();
  [[noreturn]] void died(const std::string& when);
  bool send_all(const std::string& text);
  bool read_line(std::string& line);

  std::string tool_, what_, fix_;
  int pid_ = -1;
  int fd_ = -1;
  std::string buffer_, log_, unavailable_, greeting_;
  std::mutex io_;     // one request and its answer at a time
  std::mutex mutex_;  // mutex(): the caller's sequences
};

}  // namespace wb::python
