#include "trainer/phases.h"

#include <fmt/format.h>

#include <iostream>

#include "base/errors.h"
#include "base/files.h"

namespace wb::trainer {

ModelSource model_source(const Options& o, std::optional<TrainState>& resumed, Storage storage) {
  if (resumed) {
    if (resumed->bf16_params.empty() != (storage == Storage::fp32))
      std::cout << fmt::format("notice: the state {} holds {} parameters; this run's are {}\n", o.resume,
                               resumed->bf16_params.empty() ? "fp32" : "bf16 (with fp32 master)",
                               storage == Storage::bf16 ? "bf16, rounded to nearest from them" : "fp32");
    ModelSource source{resumed->config, std::move(resumed->params), {}};
    if (storage == Storage::bf16) source.bf16_params = std::move(resumed->bf16_params);
    return source;
  }
  if (!o.model.empty()) {
    Checkpoint ck = read_checkpoint(o.model);
    if (ck.bf16 != (storage == Storage::bf16))
      std::cout << fmt::format("notice: {} holds {} parameters (model file version {}); this run's are {}\n", o.model,
                               ck.bf16 ? "bf16" : "fp32", ck.bf16 ? 5 : 3,
                               storage == Storage::bf16 ? "bf16, rounded to nearest from them (fp32 master weights)"
                                                        : "fp32, widened from them");
    return {ck.config, std::move(ck.params), {}};
  }
  return {config_from_init(o.init), {}, {}};
}

std::unique_ptr<TrainingData> load_data(const Options& o, const Config& config,
                                        const std::optional<TrainState>& resumed) {
  if (o.train.empty()) throw UsageError("give --train FILE (an llm.c token file)");
  auto d = std::make_unique<TrainingData>();
  d->train_file = read_tokens(o.train);
  d->train = std::make_unique<DataLoader>(d->train_file, o.batch, o.seq_len, config.V, o.shuffle, o.seed);
  d->train_hash = resumed || !o.state.empty() ? hash_tokens(d->train_file.tokens) : 0;
  if (resumed) {
    if (d->train_file.tokens.size() != resumed->train_tokens || d->train_hash != resumed->train_hash)
      throw UsageError(
          fmt::format("--train {}: not the tokens the state {} was trained on ({} tokens here, {} there{})", o.train,
                      o.resume, d->train_file.tokens.size(), resumed->train_tokens,
                      d->train_file.tokens.size() == resumed->train_tokens ? ", other values" : ""));
    try {
      d->train->restore(resumed->data);
    } catch (const UsageError& e) {
      throw UsageError(o.resume + ": corrupt state file: " + e.what());
    }
  }
  if (!o.val.empty()) {
    d->val_file = read_tokens(o.val);
    d->val = std::make_unique<DataLoader>(*d->val_file, o.batch, o.seq_len, config.V, false, o.seed);
  }
  return d;
}

Kernels::Kernels(const Options& o, const Registry& reg, NumericClass precision, const std::vector<Workload>& workloads)
    : backend(o.backend.empty() ? default_backend() : parse_backend(o.backend)), ex(make_executor(backend)) {
  if (!o.kernels.empty()) best = read_best(o.kernels);
  PlanOptions options;
  options.precision = precision;
  options.strict_device = o.strict_device;
  options.deterministic = o.deterministic;
  options.why_not_called = why_the_step_skips;
  plan.emplace(reg, *ex, options, best ? &*best : nullptr, workloads, std::cout);
}

void validate_sizes(const Registry& reg, const Config& config, int B, int T, const std::vector<Workload>& workloads) {
  if (T > config.maxT)
    throw UsageError("--seq-len " + std::to_string(T) + " is longer than the model's maxT " +
                     std::to_string(config.maxT));
  for (const Workload& w : workloads) {
    try {
      reg.op(w.op).check_shape(w.shape);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--batch {} --seq-len {} is beyond what the kernels take for {}: {}", B, T,
                                   config.describe(), e.what()));
    }
  }
}

uint64_t plan_hash(const KernelPlan& plan) {
  Hasher h;
  for (const Selection& s : plan.selections())
    h.add(s.op->name + " " + s.op->describe_shape(s.shape) + " " + s.variant->key() + " " + s.params.describe() + "\n");
  return h.value();
}

bool use_cuda_graph(const Options& o, const Executor& ex) {
  if (o.cuda_graph.empty()) {
    const bool graph = ex.backend() == Backend::cuda && !ex.capture_unsupported();
    // A replayed step has no op calls to time. The graph is only the default and
    // --op-times a request, so the request wins, with a notice, rather than a refusal
    // that would make --op-times on a GPU always need a second flag; an explicit
    // --cuda-graph on with --op-times contradicts itself and is refused below.
    if (graph && o.op_times) {
      std::cout << "notice: --op-times launches the step op by op (as --cuda-graph off): a step replayed as a CUDA "
                   "graph has no op calls to time, and takes less time between its kernels\n";
      return false;
    }
    return graph;
  }
  if (o.cuda_graph == "off") return false;
  if (o.cuda_graph != "on") throw UsageError("--cuda-graph " + o.cuda_graph + ": give on or off");
  if (const auto why = ex.capture_unsupported()) throw UsageError("--cuda-graph on: " + *why);
  if (o.op_times) throw UsageError("--cuda-graph on: --op-times times op calls, and a replayed step has none");
  return true;
}

void save_model(const Options& o, const Config& config, const Gpt2& model, std::vector<float>& params) {
  if (model.storage() == Storage::bf16) {
    std::vector<bf16> narrow(params.size());
    model.save_bf16_params(narrow.data());
    write_checkpoint(o.save, config, narrow.data());
  } else {
    model.save_params(params.data());
    write_checkpoint(o.save, config, params.data());
  }
  std::cout << "saved the model to " << o.save << "\n";
}

}  // namespace wb::trainer
