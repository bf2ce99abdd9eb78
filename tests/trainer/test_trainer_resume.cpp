// Resumable training (--state, --checkpoint-every, --resume): a run killed with SIGKILL
// and resumed from its last state logs bitwise the losses of an uninterrupted run on
// the CPU backend; the test is sensitive to every part of the state (a resume from the
// parameters alone, or with AdamW's moments or the data position lost, differs); bad
// state files and conflicting options exit 2 with a message.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "base/files.h"
#include "tests/support/programs.h"
#include "trainer/data.h"
#include "trainer/model.h"
#include "trainer/state.h"

namespace wb::trainer {
namespace {

namespace fs = std::filesystem;
using testing::Result;
using testing::TempDir;

// The trainer on one OpenMP thread (tests/support/programs.h: a loaded machine).
Result trainer(const std::string& args) { return testing::run_one_thread_trainer(args); }

// Starts the trainer and kills it with SIGKILL as soon as `state` exists. Returns
// whether the kill landed mid-run (false: the run had ended first, a machine too
// slow to poll). `state` must not exist before.
bool run_and_kill(const std::string& args, const std::string& state, const std::string& output) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::setenv("OMP_NUM_THREADS", "1", 1);
    const std::string command = std::string("exec ") + WB_TRAINER + " " + args + " > " + output + " 2>&1";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  for (;;) {
    if (fs::exists(state)) {
      ::kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    if (waitpid(pid, &status, WNOHANG) == pid) break;  // ended without a state: reported below
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

// Tokens that are not a trivial sequence, so that every batch has its own loss.
std::vector<int32_t> varied_tokens(int n, int V, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t(rng.below(V));
  return t;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The log's lines by step.
std::map<int, nlohmann::json> read_log(const std::string& path) {
  std::map<int, nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    lines[j.at("step").get<int>()] = j;
  }
  return lines;
}

// The sample printed after a step, or "" when none was.
std::string sample_at(const std::string& output, int step) {
  const std::string mark = "sample at step " + std::to_string(step) + ":\n";
  const auto at = output.find(mark);
  if (at == std::string::npos) return "";
  const auto begin = at + mark.size();
  return output.substr(begin, output.find("\n---", begin) - begin);
}

// The training losses (and validation losses, learning rates and gradient norms) of
// two logs are bitwise equal at every step from `first` to `last`.
void expect_same_steps(const std::map<int, nlohmann::json>& a, const std::map<int, nlohmann::json>& b, int first,
                       int last) {
  for (int step = first; step <= last; ++step) {
    ASSERT_TRUE(a.count(step) && b.count(step)) << "step " << step << " missing from a log";
    const auto &x = a.at(step), &y = b.at(step);
    for (const char* key : {"loss", "lr", "grad_norm"})
      EXPECT_EQ(x.at(key).get<double>(), y.at(key).get<double>()) << key << " at step " << step;
    ASSERT_EQ(x.contains("val_loss"), y.contains("val_loss")) << "step " << step;
    if (x.contains("val_loss")) {
      EXPECT_EQ(x.at("val_loss").get<double>(), y.at("val_loss").get<double>()) << "val_loss at step " << step;
    }
  }
}

class Resume : public ::testing::Test {
 protected:
  void SetUp() override {
    write_tokens(dir_ / "train.bin", varied_tokens(40 * 16 + 1, 64, 1));  // 5 batches of 8 x 16: passes wrap
    write_tokens(dir_ / "val.bin", varied_tokens(3 * 8 * 16 + 1, 64, 2));
    // A 2-layer model with a small vocabulary; the cosine schedule after a warm-up,
    // shuffled batches and samples, so that the step, the data order, its generator and
    // the sampler's all matter.
    Config c = config_from_init("2,64,4");
    c.V = 256, c.Vp = 256, c.maxT = 16;
    write_checkpoint(dir_ / "model.bin", c, init_params(c, 3).data());
    defaults_ = {{"--backend", "cpu"},
                 {"--model", dir_ / "model.bin"},
                 {"--batch", "8"},
                 {"--seq-len", "16"},
                 {"--peak-tflops", "1"},
                 {"--train", dir_ / "train.bin"},
                 {"--val", dir_ / "val.bin"},
                 {"--val-every", "3"},
                 {"--val-batches", "2"},
                 {"--lr", "1e-3"},
                 {"--warmup", "3"},
                 {"--schedule", "cosine"},
                 {"--shuffle", ""},
                 {"--sample-every", "5"},
                 {"--sample-len", "6"},
                 {"--seed", "5"},
                 {"--steps", "8"}};
  }
  // The command line: the defaults with `changes` added or replacing them ("-" removes a
  // flag). A flag appears once: the trainer refuses one given twice.
  std::string flags(const std::map<std::string, std::string>& changes = {}) const {
    std::map<std::string, std::string> all = defaults_;
    for (const auto& [flag, value] : changes) {
      if (value == "-")
        all.erase(flag);
      else
        all[flag] = value;
    }
    std::string line;
    for (const auto& [flag, value] : all) line += flag + (value.empty() ? "" : " " + value) + " ";
    return line;
  }
  void killed_and_resumed_matches(int steps);
  TempDir dir_;
  std::map<std::string, std::string> defaults_;
};

// The bar: a run killed by SIGKILL mid-training and resumed from its last complete
// state gives bitwise the losses, validation losses, samples, final model and final
// state of a run never interrupted. Wherever the kill lands (between steps, or while a
// state is being written), the state on disk is a complete one, and the comparison
// starts after its step.
TEST_F(Resume, KilledAndResumedRunMatchesAnUninterruptedOneBitwise) { killed_and_resumed_matches(40); }

// The same in bf16: the state carries the fp32 master weights and the bf16 parameters
// (the master weights rounded stochastically at the last update), and every step's
// rounding seed follows from --seed and the step.
TEST_F(Resume, KilledAndResumedBf16RunMatchesAnUninterruptedOneBitwise) {
  defaults_["--precision"] = "bf16";
  killed_and_resumed_matches(20);
}

void Resume::killed_and_resumed_matches(int steps) {
  defaults_["--sample-every"] = "1";  // every state then holds a generator that has drawn
  const Result full = trainer(flags({{"--steps", std::to_string(steps)},
                                     {"--log", dir_ / "full.jsonl"},
                                     {"--save", dir_ / "full.bin"},
                                     {"--state", dir_ / "full.state"}}));
  ASSERT_EQ(full.code, 0) << full.output;

  // The same command with a state every 2 steps, killed once the first state is there.
  const std::string state = dir_ / "run.state", log = dir_ / "run.jsonl";
  const std::map<std::string, std::string> killed_flags{
      {"--steps", std::to_string(steps)}, {"--log", log}, {"--state", state}, {"--checkpoint-every", "2"}};
  const std::string killed_args = flags(killed_flags);
  bool killed = false;
  for (int attempt = 0; attempt < 3 && !killed; ++attempt) {  // again if the run outran the poll
    fs::remove(state);
    fs::remove(log);
    killed = run_and_kill(killed_args, state, dir_ / "killed.out");
  }
  ASSERT_TRUE(killed) << "three runs ended before the kill landed:\n" << read_text(dir_ / "killed.out");
  const int saved = int(read_state(state).step);
  std::cout << "killed after the state of step " << saved << " was written\n";
  ASSERT_LT(saved, steps);
  EXPECT_EQ(saved % 2, 0);

  const Result resumed = trainer(killed_args + "--resume " + state + " --save " + (dir_ / "resumed.bin"));
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming from " + state + " after step " + std::to_string(saved)), std::string::npos)
      << resumed.output;
  EXPECT_EQ(resumed.output.find("step " + std::to_string(saved) + "/"), std::string::npos) << "step ran twice";
  EXPECT_EQ(resumed.output.find("warning: the kernel plan differs"), std::string::npos) << resumed.output;

  // The log reads as one run: the killed run's lines up to the state, the resumed run's
  // after it, every value bitwise those of the uninterrupted run.
  const auto full_log = read_log(dir_ / "full.jsonl"), run_log = read_log(log);
  EXPECT_EQ(run_log.size(), std::size_t(steps));
  expect_same_steps(full_log, run_log, 1, steps);
  EXPECT_TRUE(full_log.at(steps).contains("val_loss"));
  for (int step = saved + 1; step <= steps; ++step) {
    EXPECT_NE(sample_at(full.output, step), "") << full.output;
    EXPECT_EQ(sample_at(resumed.output, step), sample_at(full.output, step)) << "sample at step " << step;
  }
  EXPECT_EQ(read_text(dir_ / "resumed.bin"), read_text(dir_ / "full.bin")) << "the final parameters differ";
  EXPECT_EQ(read_text(state), read_text(dir_ / "full.state")) << "the final training states differ";
}

// The bitwise comparison is sensitive: from the state of step 4 the run goes on
// exactly; from the parameters alone (--model of --save), or with AdamW's moments or
// the data position lost, it does not.
TEST_F(Resume, EveryPartOfTheStateMatters) {
  // The constant schedule after the warm-up: --steps may grow on resume.
  defaults_["--schedule"] = "const";
  ASSERT_EQ(trainer(flags({{"--log", dir_ / "full.jsonl"}})).code, 0);
  const Result first = trainer(flags({{"--steps", "4"}, {"--save", dir_ / "m4.bin"}, {"--state", dir_ / "s4.state"}}));
  ASSERT_EQ(first.code, 0) << first.output;
  const auto full = read_log(dir_ / "full.jsonl");

  auto resume = [&](const std::string& from, const std::string& name) {
    const Result r = trainer(flags({{"--resume", from}, {"--log", dir_ / name}}));
    EXPECT_EQ(r.code, 0) << r.output;
    return read_log(dir_ / name);
  };
  const auto exact = resume(dir_ / "s4.state", "exact.jsonl");
  EXPECT_EQ(exact.begin()->first, 5);
  expect_same_steps(full, exact, 5, 8);

  // The parameters alone: a fresh run from --save's model (step 1, fresh moments, the
  // data from its start).
  ASSERT_EQ(trainer(flags({{"--steps", "4"}, {"--model", dir_ / "m4.bin"}, {"--log", dir_ / "params.jsonl"}})).code, 0);
  const auto params_only = read_log(dir_ / "params.jsonl");
  for (int i = 1; i <= 4; ++i)
    EXPECT_NE(params_only.at(i).at("loss").get<double>(), full.at(4 + i).at("loss").get<double>()) << "step " << i;

  // Without the moments: step 5's loss comes before its update and still matches; every
  // update from there on differs.
  TrainState s = read_state(dir_ / "s4.state");
  std::fill(s.m.begin(), s.m.end(), 0.0f);
  std::fill(s.v.begin(), s.v.end(), 0.0f);
  write_state(dir_ / "no_moments.state", s);
  const auto no_moments = resume(dir_ / "no_moments.state", "no_moments.jsonl");
  EXPECT_EQ(no_moments.at(5).at("loss").get<double>(), full.at(5).at("loss").get<double>());
  for (int step = 6; step <= 8; ++step)
    EXPECT_NE(no_moments.at(step).at("loss").get<double>(), full.at(step).at("loss").get<double>()) << step;

  // Another position in the pass: step 5 trains on another batch.
  s = read_state(dir_ / "s4.state");
  s.data.next = (s.data.next + 1) % int64_t(s.data.order.size());
  write_state(dir_ / "moved.state", s);
  const auto moved = resume(dir_ / "moved.state", "moved.jsonl");
  EXPECT_NE(moved.at(5).at("loss").get<double>(), full.at(5).at("loss").get<double>());
}

// In bf16 the state's bf16 parameters matter: from the same master weights without
// them (an fp32 state), the parameters are the master weights rounded to nearest, not
// the stochastic rounding the uninterrupted run reads, and step 5's loss differs. A
// bf16 state cut short is refused by its size.
TEST_F(Resume, Bf16StateCarriesItsBf16Parameters) {
  defaults_["--precision"] = "bf16";
  defaults_["--schedule"] = "const";
  ASSERT_EQ(trainer(flags({{"--log", dir_ / "full.jsonl"}})).code, 0);
  ASSERT_EQ(trainer(flags({{"--steps", "4"}, {"--state", dir_ / "s4.state"}})).code, 0);
  const auto full = read_log(dir_ / "full.jsonl");
  TrainState s = read_state(dir_ / "s4.state");
  ASSERT_EQ(s.bf16_params.size(), s.params.size());
  std::size_t stochastic = 0;  // parameters not at the nearest bf16 of their master weight
  for (std::size_t i = 0; i < s.params.size(); ++i) stochastic += s.bf16_params[i] != to_bf16(s.params[i]);
  EXPECT_GT(stochastic, 0u);

  const Result exact = trainer(flags({{"--resume", dir_ / "s4.state"}, {"--log", dir_ / "exact.jsonl"}}));
  ASSERT_EQ(exact.code, 0) << exact.output;
  expect_same_steps(full, read_log(dir_ / "exact.jsonl"), 5, 8);

  s.bf16_params.clear();
  write_state(dir_ / "fp32.state", s);
  const Result rounded = trainer(flags({{"--resume", dir_ / "fp32.state"}, {"--log", dir_ / "rounded.jsonl"}}));
  ASSERT_EQ(rounded.code, 0) << rounded.output;
  EXPECT_NE(rounded.output.find("holds fp32 parameters; this run's are bf16, rounded to nearest"), std::string::npos)
      << rounded.output;
  EXPECT_NE(read_log(dir_ / "rounded.jsonl").at(5).at("loss").get<double>(), full.at(5).at("loss").get<double>());

  const std::string bytes = read_text(dir_ / "s4.state");
  write_file_atomically(dir_ / "cut.state", bytes.substr(0, bytes.size() - 2));
  EXPECT_EXIT_WITH(trainer(flags({{"--resume", dir_ / "cut.state"}})), 2, "truncated state file");
  std::string storage = bytes;
  storage[38 * 8] = 2;
  write_file_atomically(dir_ / "storage.state", storage);
  EXPECT_EXIT_WITH(trainer(flags({{"--resume", dir_ / "storage.state"}})), 2, "parameter storage 2 is neither 0 nor 1");
}

// --rounding nearest puts every bf16 parameter at the nearest bf16 of its master weight;
// the state records the choice, and a resume must repeat it (then it continues bitwise).
TEST_F(Resume, Bf16NearestRoundingIsRecordedAndMustBeRepeated) {
  defaults_["--precision"] = "bf16";
  defaults_["--schedule"] = "const";
  defaults_["--rounding"] = "nearest";
  ASSERT_EQ(trainer(flags({{"--log", dir_ / "full.jsonl"}})).code, 0);
  ASSERT_EQ(trainer(flags({{"--steps", "4"}, {"--state", dir_ / "s4.state"}})).code, 0);
  const TrainState s = read_state(dir_ / "s4.state");
  ASSERT_EQ(s.bf16_params.size(), s.params.size());
  std::size_t off_nearest = 0;
  for (std::size_t i = 0; i < s.params.size(); ++i) off_nearest += s.bf16_params[i] != to_bf16(s.params[i]);
  EXPECT_EQ(off_nearest, 0u);

  EXPECT_EXIT_WITH(trainer(flags({{"--resume", dir_ / "s4.state"}, {"--rounding", "stochastic"}})), 2,
                   "--rounding stochastic differs from nearest in the state");
  const Result exact = trainer(flags({{"--resume", dir_ / "s4.state"}, {"--log", dir_ / "exact.jsonl"}}));
  ASSERT_EQ(exact.code, 0) << exact.output;
  expect_same_steps(read_log(dir_ / "full.jsonl"), read_log(dir_ / "exact.jsonl"), 5, 8);

  std::string rounding = read_text(dir_ / "s4.state");
  rounding[39 * 8] = 2;
  write_file_atomically(dir_ / "rounding.state", rounding);
  EXPECT_EXIT_WITH(trainer(flags({{"--resume", dir_ / "rounding.state"}})), 2, "rounding 2 is neither 0 nor 1");
  EXPECT_EXIT_WITH(trainer(flags({{"--rounding", "up"}})), 2, "--rounding 'up' is not known (legal: stochastic, nearest)");
  EXPECT_EXIT_WITH(trainer(flags({{"--precision", "fp32"}})), 2, "--rounding nearest rounds the bf16 parameters");
}

// A state file that is not one, or not whole, or conflicts with the options: exit 2
// with a message naming the file or the flag, before any training.
TEST_F(Resume, BadStateFilesAndConflictingOptionsExitTwo) {
  defaults_["--schedule"] = "const";  // --steps may grow: a state of step 4 resumes at --steps 8
  const std::string good = dir_ / "good.state";
  ASSERT_EQ(trainer(flags({{"--steps", "4"}, {"--state", good}, {"--save", dir_ / "m.bin"}})).code, 0);
  const std::string args = flags();
  const std::string bytes = read_text(good);
  auto variant = [&](const std::string& name, const std::string& content) {
    write_file_atomically(dir_ / name, content);
    return args + "--resume " + (dir_ / name);
  };
  auto with_slot = [&](int slot, uint64_t value) {
    std::string b = bytes;
    std::memcpy(b.data() + slot * 8, &value, 8);
    return b;
  };
  EXPECT_EXIT_WITH(trainer(args + "--resume " + (dir_ / "none.state")), 2, "cannot read the state");
  EXPECT_EXIT_WITH(trainer(variant("short.state", bytes.substr(0, 1000))), 2, "no complete 1024-byte header");
  EXPECT_EXIT_WITH(trainer(variant("cut.state", bytes.substr(0, bytes.size() - 4))), 2, "truncated state file");
  EXPECT_EXIT_WITH(trainer(variant("long.state", bytes + "x")), 2, "1 bytes after the end of the state");
  EXPECT_EXIT_WITH(trainer(args + "--resume " + (dir_ / "m.bin")), 2, "not a trainer state file");
  EXPECT_EXIT_WITH(trainer(variant("version.state", with_slot(1, 7))), 2, "state file version 7");
  // A flipped count of batches: checked against the file's size, never allocated.
  EXPECT_EXIT_WITH(trainer(variant("batches.state", with_slot(14, uint64_t(1) << 50))), 2, "truncated state file");
  EXPECT_EXIT_WITH(trainer(variant("layers.state", with_slot(6, 3))), 2, "parameters, its configuration");
  EXPECT_EXIT_WITH(trainer(variant("reserved.state", with_slot(100, 1))), 2, "reserved header slot 100");
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  EXPECT_EXIT_WITH(trainer(variant("flipped.state", flipped)), 2, "the checksum does not match");
  // An order that is not a permutation of the batches, with a checksum that fits.
  TrainState s = read_state(good);
  s.data.order[0] = s.data.order[1];
  write_state(dir_ / "order.state", s);
  EXPECT_EXIT_WITH(trainer(args + "--resume " + (dir_ / "order.state")), 2, "not a permutation");

  auto resume = [&](std::map<std::string, std::string> changes) {
    changes["--resume"] = good;
    return trainer(flags(changes));
  };
  EXPECT_EXIT_WITH(resume({{"--lr", "2e-3"}}), 2, "--lr 0.002 differs from 0.001 in the state");
  EXPECT_EXIT_WITH(resume({{"--batch", "4"}}), 2, "--batch 4 differs from 8");
  EXPECT_EXIT_WITH(resume({{"--seed", "6"}}), 2, "--seed 6 differs from 5");
  EXPECT_EXIT_WITH(resume({{"--grad-clip", "0"}}), 2, "--grad-clip 0 differs from 1");
  EXPECT_EXIT_WITH(resume({{"--schedule", "cosine"}}), 2, "--schedule cosine differs from const");
  EXPECT_EXIT_WITH(resume({{"--model", "-"}, {"--init", "2,64,4"}}), 2,
                   "--init 2,64,4 describes L=2 C=64 NH=4 V=50257");
  EXPECT_EXIT_WITH(resume({{"--shuffle", "-"}}), 2, "--shuffle is not given here and given in the state");
  write_tokens(dir_ / "other.bin", varied_tokens(40 * 16 + 1, 64, 3));
  EXPECT_EXIT_WITH(resume({{"--train", dir_ / "other.bin"}}), 2, "not the tokens the state");
  EXPECT_EXIT_WITH(resume({{"--debug-state", dir_ / "debug.bin"}}), 2, "--debug-state writes the first step");
  EXPECT_EQ(resume({{"--model", "-"}}).code, 0) << "--resume needs neither --model nor --init";

  EXPECT_EXIT_WITH(trainer(flags({{"--checkpoint-every", "2"}})), 2, "--checkpoint-every needs --state");
  EXPECT_EXIT_WITH(trainer(flags({{"--checkpoint-every", "-1"}, {"--state", dir_ / "x.state"}})), 2,
                   "--checkpoint-every -1");
  EXPECT_EXIT_WITH(trainer(flags({{"--state", dir_ / "missing/x.state"}})), 2, "cannot write --state");
}

// The constant schedule trains on past the first run's --steps, the cosine one does not
// (its every learning rate depends on --steps); --steps at or below the state's step
// leaves nothing to do.
TEST_F(Resume, StepsMayGrowUnderTheConstantScheduleOnly) {
  const std::string cosine = dir_ / "cosine.state";
  ASSERT_EQ(trainer(flags({{"--steps", "3"}, {"--state", cosine}})).code, 0);
  EXPECT_EXIT_WITH(trainer(flags({{"--steps", "5"}, {"--resume", cosine}})), 2,
                   "--steps 5 differs from 3 in the state " + cosine + ": the cosine schedule's learning rates");
  defaults_["--schedule"] = "const";
  const std::string state = dir_ / "s.state";
  ASSERT_EQ(trainer(flags({{"--steps", "3"}, {"--state", state}})).code, 0);
  EXPECT_EXIT_WITH(trainer(flags({{"--steps", "3"}, {"--resume", state}})), 2, "has trained 3 steps already");
  const Result r = trainer(flags({{"--steps", "5"}, {"--resume", state}, {"--state", state}}));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("step     4/5"), std::string::npos) << r.output;
  EXPECT_EQ(read_state(state).step, 5);
}

}  // namespace
}  // namespace wb::trainer
