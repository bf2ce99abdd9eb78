#include "workbench/runtime/report.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "base/errors.h"
#include "base/files.h"
#include "workbench/runtime/json_file.h"
#include "workbench/runtime/json_integer.h"

namespace wb {
namespace {

using nlohmann::json;

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Reads fields of a JSON object, naming the place of whatever is missing or mistyped.
class Reader {
 public:
  Reader(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail("is not an object");
  }

  [[noreturn]] void fail(const std::string& what) const { throw UsageError(where_ + " " + what); }

  const json& at(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) fail("has no '" + std::string(key) + "'");
    return *it;
  }
  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  std::string str(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) fail("'" + std::string(key) + "' is not a string");
    return v.get<std::string>();
  }
  double num(const char* key) const {
    const json& v = at(key);
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) fail("'" + std::string(key) + "' is not a number");
    return v.get<double>();
  }
  // A measured time or a model's count: null, nan, inf and negative values would pass
  // through every comparison as false and let a broken report decide.
  double measure(const char* key) const {
    const json& v = at(key);
    if (!v.is_number()) fail("'" + std::string(key) + "' is " + v.dump() + ", not a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0)
      fail("'" + std::string(key) + "' is " + v.dump() + ": it must be finite and not negative");
    return x;
  }
  // An integer in [lo, hi], the range of the field's type and of what it counts.
  int64_t integer(const char* key, int64_t lo, int64_t hi) const {
    return json_integer(at(key), where_ + " '" + key + "'", lo, hi);
  }
  bool boolean(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail("'" + std::string(key) + "' is not true or false");
    return v.get<bool>();
  }
  Reader child(const char* key) const { return Reader(at(key), where_ + "." + key); }
  const std::string& where() const { return where_; }

 private:
  const json& j_;
  std::string where_;
};

template <class F>
auto translated(const Reader& r, F&& parse) {
  try {
    return parse();
  } catch (const UsageError& e) {
    r.fail(std::string(": ") + e.what());
  }
}

json to_json(const CpuCapabilities& c) {
  return {{"features", c.features},
          {"detected", c.detected},
          {"detected_level", c.detected_level},
          {"cap", c.cap},
          {"onednn", c.onednn},
          {"onednn_bf16_matmul", c.onednn_bf16_matmul},
          {"openblas_core", c.openblas_core}};
}

CpuCapabilities cpu_capabilities_from(const Reader& r) {
  CpuCapabilities c;
  c.features = r.str("features");
  c.detected = r.str("detected");
  c.detected_level = r.str("detected_level");
  c.cap = r.str("cap");
  c.onednn = r.str("onednn");
  c.onednn_bf16_matmul = r.boolean("onednn_bf16_matmul");
  c.openblas_core = r.str("openblas_core");
  return c;
}

json to_json(const DeviceInfo& d) {
  json j = {{"backend", to_string(d.backend)},
            {"name", d.name},
            {"slug", d.slug},
            {"multiprocessors", d.multiprocessors},
            {"memory_bytes", d.memory_bytes},
            {"l2_bytes", d.l2_bytes},
            {"compute_capability", d.compute_capability},
            {"clock_khz", d.clock_khz},
            {"memory_clock_khz", d.memory_clock_khz},
            {"memory_bus_bits", d.memory_bus_bits},
            {"driver_version", d.driver_version},
            {"runtime_version", d.runtime_version},
            {"emulation_flavour", d.emulation_flavour},
            {"architecture", d.architecture}};
  if (!d.isa.empty()) j["isa"] = d.isa;
  if (d.cpu) j["cpu"] = to_json(*d.cpu);
  return j;
}

DeviceInfo device_from(const Reader& r) {
  DeviceInfo d;
  d.backend = translated(r, [&] { return parse_backend(r.str("backend")); });
  d.name = r.str("name");
  d.slug = r.str("slug");
  d.multiprocessors = int(r.integer("multiprocessors", 0, kMaxInt));
  d.memory_bytes = r.integer("memory_bytes", 0, kMaxInt64);
  d.l2_bytes = r.integer("l2_bytes", 0, kMaxInt64);
  d.compute_capability = r.str("compute_capability");
  d.clock_khz = int(r.integer("clock_khz", 0, kMaxInt));
  d.memory_clock_khz = int(r.integer("memory_clock_khz", 0, kMaxInt));
  d.memory_bus_bits = int(r.integer("memory_bus_bits", 0, kMaxInt));
  d.driver_version = r.str("driver_version");
  d.runtime_version = r.str("runtime_version");
  if (r.has("emulation_flavour")) d.emulation_flavour = r.str("emulation_flavour");  // wb.report/2
  if (r.has("architecture")) d.architecture = r.str("architecture");                 // optional in wb.report/2
  if (r.has("isa")) d.isa = r.str("isa");                                            // optional in wb.report/2
  if (r.has("cpu")) d.cpu = cpu_capabilities_from(r.child("cpu"));                   // optional in wb.report/2
  return d;
}

json to_json(const ShardInfo& s) {
  return {{"index", s.index}, {"count", s.count}, {"units", s.units}, {"plan", s.plan}, {"seed", s.seed}};
}

json to_json(const MergeInfo& m) {
  json shards = json::array();
  for (const MergedShard& s : m.shards)
    shards.push_back({{"index", s.index},
                      {"file", s.file},
                      {"host", s.host},
                      {"created", s.created},
                      {"command", s.command},
                      {"records", s.records}});
  return {{"count", m.count}, {"units", m.units}, {"plan", m.plan},
          {"seed", m.seed},   {"shards", shards}, {"missing", m.missing}};
}

uint64_t seed_from(const Reader& r) {
  const json& v = r.at("seed");
  if (!v.is_number_unsigned()) r.fail("'seed' is not an integer of 0 or more");
  return v.get<uint64_t>();
}

// What a shard and a merged report both say of their sweep: N, its units and its plan.
void sweep_plan_from(const Reader& r, int& count, int64_t& units, std::string& plan) {
  count = int(r.integer("count", 1, kMaxInt));  // a sweep has at least 1 shard
  units = r.integer("units", 0, kMaxInt64);
  plan = r.str("plan");
}

int shard_index_from(const Reader& r, int count) {
  const int64_t k = r.integer("index", 1, kMaxInt);
  if (k > count) r.fail("'index' is " + std::to_string(k) + ": shards are numbered 1 to " + std::to_string(count));
  return int(k);
}

ShardInfo shard_from(const Reader& r) {
  ShardInfo s;
  sweep_plan_from(r, s.count, s.units, s.plan);
  s.index = shard_index_from(r, s.count);
  s.seed = seed_from(r);
  return s;
}

MergeInfo merged_from(const Reader& r) {
  MergeInfo m;
  sweep_plan_from(r, m.count, m.units, m.plan);
  m.seed = seed_from(r);
  const json& shards = r.at("shards");
  if (!shards.is_array()) r.fail("'shards' is not an array");
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Reader s(shards[i], r.where() + ".shards[" + std::to_string(i) + "]");
    MergedShard one;
    one.index = shard_index_from(s, m.count);
    one.file = s.str("file");
    one.host = s.str("host");
    one.created = s.str("created");
    one.command = s.str("command");
    one.records = s.integer("records", 0, kMaxInt64);
    m.shards.push_back(one);
  }
  const json& missing = r.at("missing");
  if (!missing.is_array()) r.fail("'missing' is not an array");
  for (std::size_t i = 0; i < missing.size(); ++i)  // shard numbers
    m.missing.push_back(int(json_integer(missing[i], r.where() + " 'missing'[" + std::to_string(i) + "]", 1, m.count)));
  return m;
}

json to_json(const ReportContext& c) {
  const BuildInfo& b = c.build;
  json j = {{"created", c.created},
            {"command", c.command},
            {"host", c.host},
            {"source", {{"commit", c.source.commit}, {"dirty", c.source.dirty}}},
            {"build",
             {{"wb_version", b.wb_version},
              {"build_type", b.build_type},
              {"cxx_compiler", b.cxx_compiler},
              {"cxx_flags", b.cxx_flags},
              {"cuda_compiler", b.cuda_compiler},
              {"cuda_flags", b.cuda_flags},
              {"cuda_architectures", b.cuda_architectures},
              {"benchmark_engine", b.benchmark_engine},
              {"blas", b.blas}}},
            {"device", to_json(c.device)},
            {"ceilings",
             {{"copy_gbps", c.ceilings.copy_gbps},
              {"fp32_tflops", c.ceilings.fp32_tflops},
              {"tf32_tflops", c.ceilings.tf32_tflops},
              {"bf16_tflops", c.ceilings.bf16_tflops},
              {"read_gbps", c.ceilings.read_gbps},
              {"update_gbps", c.ceilings.update_gbps},
              {"memory_gbps", c.ceilings.memory_gbps},
              {"stream_bytes", c.ceilings.stream_bytes},
              {"threads", c.ceilings.threads},
              {"method", c.ceilings.method}}},
            {"timing",
             {{"repetitions", c.timing.repetitions},
              {"min_time_s", c.timing.min_time_s},
              {"warmup_s", c.timing.warmup_s},
              {"l2_flush", c.timing.flush_cache},
              {"flush_bytes", c.timing.flush_bytes}}}};
  if (!c.ceilings.absent.empty()) j["ceilings"]["absent"] = c.ceilings.absent;
  if (c.shard) j["shard"] = to_json(*c.shard);
  if (c.merged) j["merged_from"] = to_json(*c.merged);
  if (const auto& p = c.predicted_for)
    j["predicted_for"] = {{"device", p->device},
                          {"slug", p->slug},
                          {"compute_capability", p->compute_capability},
                          {"multiprocessors", p->multiprocessors},
                          {"l2_bytes", p->l2_bytes},
                          {"description", p->description},
                          {"device_measured", p->device_measured},
                          {"model", p->model},
                          {"sample_blocks", p->sample_blocks}};
  if (c.predicted_for && !c.predicted_for->constants.empty())
    j["predicted_for"]["constants"] = c.predicted_for->constants;
  return j;
}

ReportContext context_from(const Reader& r) {
  ReportContext c;
  c.created = r.str("created");
  c.command = r.str("command");
  c.host = r.str("host");
  const Reader src = r.child("source");
  c.source.commit = src.str("commit");
  c.source.dirty = src.boolean("dirty");
  const Reader b = r.child("build");
  c.build =
      BuildInfo{b.str("wb_version"),    b.str("build_type"), b.str("cxx_compiler"),       b.str("cxx_flags"),
                b.str("cuda_compiler"), b.str("cuda_flags"), b.str("cuda_architectures"), b.str("benchmark_engine"),
                b.has("blas") ? b.str("blas") : std::string()};
  c.device = device_from(r.child("device"));
  const Reader ceil = r.child("ceilings");
  c.ceilings.copy_gbps = ceil.num("copy_gbps");
  c.ceilings.fp32_tflops = ceil.num("fp32_tflops");
  c.ceilings.tf32_tflops = ceil.num("tf32_tflops");
  c.ceilings.bf16_tflops = ceil.num("bf16_tflops");
  c.ceilings.method = ceil.str("method");
  // Optional in wb.report/2: reports written before the streams were measured lack them
  // (their roofline is then taken against copy_gbps, as it was).
  if (ceil.has("read_gbps")) c.ceilings.read_gbps = ceil.num("read_gbps");
  if (ceil.has("update_gbps")) c.ceilings.update_gbps = ceil.num("update_gbps");
  if (ceil.has("memory_gbps")) c.ceilings.memory_gbps = ceil.num("memory_gbps");
  if (ceil.has("stream_bytes")) c.ceilings.stream_bytes = ceil.integer("stream_bytes", 0, kMaxInt64);
  if (ceil.has("threads")) c.ceilings.threads = int(ceil.integer("threads", 0, kMaxInt));
  if (ceil.has("absent")) {  // optional in wb.report/2: the ceilings not measurable there, and why
    const json& absent = ceil.at("absent");
    if (!absent.is_object()) ceil.fail("'absent' is not an object");
    for (const auto& [field, why] : absent.items()) {
      if (!why.is_string()) ceil.fail("'absent'." + field + " is not a string");
      c.ceilings.absent[field] = why.get<std::string>();
    }
  }
  const Reader t = r.child("timing");
  c.timing.repetitions = int(t.integer("repetitions", 1, kMaxInt));
  c.timing.min_time_s = t.num("min_time_s");
  c.timing.warmup_s = t.num("warmup_s");
  c.timing.flush_cache = t.boolean("l2_flush");
  if (t.has("flush_bytes")) c.timing.flush_bytes = std::size_t(t.integer("flush_bytes", 0, kMaxInt64));
  if (r.has("shard")) c.shard = shard_from(r.child("shard"));                // optional in wb.report/2
  if (r.has("merged_from")) c.merged = merged_from(r.child("merged_from"));  // optional in wb.report/2
  if (c.shard && c.merged) r.fail("is both a shard's report ('shard') and a merge of shards ('merged_from')");
  if (r.has("predicted_for")) {  // optional in wb.report/2: a report of predicted times
    const Reader p = r.child("predicted_for");
    PredictedFor f;
    f.device = p.str("device");
    f.slug = p.str("slug");
    f.compute_capability = p.str("compute_capability");
    f.multiprocessors = int(p.integer("multiprocessors", 1, kMaxInt));
    f.l2_bytes = p.integer("l2_bytes", 0, kMaxInt64);
    f.description = p.str("description");
    f.device_measured = p.boolean("device_measured");
    f.model = p.str("model");
    f.sample_blocks = uint64_t(p.integer("sample_blocks", 0, kMaxInt64));
    if (p.has("constants")) f.constants = p.str("constants");  // optional: from 2026-11-29
    c.predicted_for = f;
  }
  return c;
}

json to_json(const TensorCheck& c) {
  json j = {{"tensor", c.tensor},
            {"count", c.count},
            {"mismatches", c.mismatches},
            {"non_finite", c.non_finite},
            {"max_abs_err", c.max_abs_err},
            {"max_rel_err", c.max_rel_err},
            {"atol", c.tol.atol},
            {"rtol", c.tol.rtol},
            {"first_bad", c.first_bad},
            {"first_bad_value", number_or_null(c.first_bad_value)},
            {"first_bad_expected", number_or_null(c.first_bad_expected)}};
  if (c.tol.ulps > 0) j["ulps"] = c.tol.ulps;
  if (c.bias_ulps) {
    j["bias_ulps"] = number_or_null(*c.bias_ulps);
    j["bias_elements"] = c.bias_elements;
  }
  j["tol_used"] = number_or_null(c.tol_used);
  // The row test's fields, present when it ran (reports before it have none, and read
  // back as not run).
  if (c.rows.length > 0) {
    j["row_length"] = c.rows.length;
    j["row_parts"] = c.rows.parts;
    j["row_bound"] = c.rows.bound;
    j["row_floor"] = c.rows.floor;
    j["rows_checked"] = c.rows_checked;
    j["rows_failed"] = c.rows_failed;
    j["first_bad_row"] = c.first_bad_row;
    j["first_bad_row_rel_err"] = number_or_null(c.first_bad_row_rel_err);
    j["row_tol_used"] = number_or_null(c.row_tol_used);
    j["max_row_rel_err"] = number_or_null(c.max_row_rel_err);
  }
  return j;
}

TensorCheck check_from(const Reader& r) {
  TensorCheck c;
  c.tensor = r.str("tensor");
  c.count = r.integer("count", 0, kMaxInt64);
  c.mismatches = r.integer("mismatches", 0, kMaxInt64);
  c.non_finite = r.integer("non_finite", 0, kMaxInt64);
  c.max_abs_err = r.num("max_abs_err");
  c.max_rel_err = r.num("max_rel_err");
  c.tol = Tolerance{r.num("atol"), r.num("rtol"), r.has("ulps") ? r.num("ulps") : 0.0};
  if (r.has("bias_ulps")) {
    c.bias_ulps = r.num("bias_ulps");
    c.bias_elements = r.integer("bias_elements", 0, kMaxInt64);
  }
  if (r.has("tol_used")) c.tol_used = r.num("tol_used");
  if (r.has("row_length")) {  // from 2026-11-29: the row test
    c.rows.length = r.integer("row_length", 1, kMaxInt64);
    c.rows.parts = r.integer("row_parts", 1, kMaxInt64);
    c.rows.bound = r.num("row_bound");
    c.rows.floor = r.num("row_floor");
    c.rows_checked = r.integer("rows_checked", 0, kMaxInt64);
    c.rows_failed = r.integer("rows_failed", 0, kMaxInt64);
    c.first_bad_row = r.integer("first_bad_row", -1, kMaxInt64);  // -1: none
    c.first_bad_row_rel_err = r.num("first_bad_row_rel_err");
    c.row_tol_used = r.num("row_tol_used");
    c.max_row_rel_err = r.num("max_row_rel_err");
  }
  c.first_bad = r.integer("first_bad", -1, kMaxInt64);  // -1: none
  c.first_bad_value = r.num("first_bad_value");
  c.first_bad_expected = r.num("first_bad_expected");
  return c;
}

Record record_from(const Reader& r) {
  Record rec;
  rec.op = r.str("op");
  rec.backend = translated(r, [&] { return parse_backend(r.str("backend")); });
  rec.variant = int(r.integer("variant", 1, kMaxInt));
  rec.variant_name = r.str("variant_name");
  rec.numeric = translated(r, [&] { return parse_numeric_class(r.str("numeric_class")); });
  rec.source = r.str("source");
  rec.source_hash = r.str("source_hash");
  const json& params = r.at("params");
  if (!params.is_object()) r.fail("'params' is not an object");
  for (const auto& [name, value] : params.items())  // 0 is a legal value (dq_atomics)
    rec.params.set(name, int(json_integer(value, r.where() + " params." + name, 0, kMaxInt)));
  const json& shape = r.at("shape");
  if (!shape.is_object()) r.fail("'shape' is not an object");
  for (const auto& [dim, value] : shape.items()) {
    const int64_t n = json_integer(value, r.where() + " shape." + dim, 1, kMaxInt64);
    // Init-captures: C++17 does not let a lambda capture a structured binding (clang refuses).
    translated(r, [&, &name = dim] {
      rec.shape.set(name, n);
      return 0;
    });
  }
  for (const auto& dim : Shape::dim_names())  // JSON objects do not keep their order
    if (shape.contains(dim)) rec.dims.push_back(dim);
  if (r.has("omitted")) rec.omitted = r.at("omitted").get<std::vector<std::string>>();
  rec.seed = seed_from(r);
  rec.status = translated(r, [&] { return parse_status(r.str("status")); });
  rec.reason = r.str("reason");
  if (r.has("deterministic")) rec.deterministic = r.boolean("deterministic");
  if (r.has("notes")) {
    if (!r.at("notes").is_array()) r.fail("'notes' is not an array");
    for (const json& n : r.at("notes")) {
      if (!n.is_string()) r.fail("'notes' holds something other than strings");
      rec.notes.push_back(n.get<std::string>());
    }
  }
  const json& errors = r.at("errors");
  if (!errors.is_array()) r.fail("'errors' is not an array");
  for (std::size_t i = 0; i < errors.size(); ++i)
    rec.errors.push_back(check_from(Reader(errors[i], r.where() + ".errors[" + std::to_string(i) + "]")));
  if (r.has("timing")) {
    const Reader t = r.child("timing");
    TimingStats s;
    s.median_s = t.measure("median_us") * 1e-6;
    s.min_s = t.measure("min_us") * 1e-6;
    s.mean_s = t.measure("mean_us") * 1e-6;
    s.stddev_s = t.measure("stddev_us") * 1e-6;
    s.cv = t.measure("cv");
    s.repetitions = int(t.integer("repetitions", 1, kMaxInt));
    s.iterations = t.integer("iterations", 1, kMaxInt64);
    rec.timing = s;
  }
  if (r.has("counters")) rec.counters = counters_from_json(r.at("counters"), r.where() + ".counters");
  if (r.has("predicted")) {  // optional in wb.report/2: a time predicted, never measured
    const Reader p = r.child("predicted");
    rec.predicted =
        PredictedTime{p.measure("us") * 1e-6, p.str("bound"), uint64_t(p.integer("launches", 0, kMaxInt64))};
  }
  const Reader model = r.child("model");
  rec.bytes = model.measure("bytes");
  rec.flops = model.measure("flops");
  return rec;
}

}  // namespace

json to_json(const Record& r, const Ceilings& ceilings, int64_t llc_bytes) {
  json params = json::object();
  for (const auto& [name, value] : r.params.items()) params[name] = value;
  json shape = json::object();
  for (const auto& d : r.dims) shape[d] = r.shape.get(d);
  json errors = json::array();
  for (const auto& c : r.errors) errors.push_back(to_json(c));
  json j = {{"op", r.op},
            {"backend", to_string(r.backend)},
            {"variant", r.variant},
            {"variant_name", r.variant_name},
            {"numeric_class", to_string(r.numeric)},
            {"source", r.source},
            {"source_hash", r.source_hash},
            {"params", params},
            {"shape", shape},
            {"omitted", r.omitted},
            {"seed", r.seed},
            {"status", to_string(r.status)},
            {"reason", r.reason},
            {"deterministic", r.deterministic ? json(*r.deterministic) : json(nullptr)},
            {"errors", errors},
            {"model", {{"bytes", r.bytes}, {"flops", r.flops}}}};
  if (!r.notes.empty()) j["notes"] = r.notes;
  if (r.counters) j["counters"] = to_json(*r.counters);
  if (r.predicted)
    j["predicted"] = {
        {"us", r.predicted->seconds * 1e6}, {"bound", r.predicted->bound}, {"launches", r.predicted->launches}};
  if (r.timing) {
    const TimingStats& t = *r.timing;
    j["timing"] = {{"median_us", t.median_s * 1e6},
                   {"min_us", t.min_s * 1e6},
                   {"mean_us", t.mean_s * 1e6},
                   {"stddev_us", t.stddev_s * 1e6},
                   {"cv", t.cv},
                   {"repetitions", t.repetitions},
                   {"iterations", t.iterations}};
    const PercentOfPeak pct = r.percent(ceilings);
    j["throughput"] = {{"gbps", r.gbps()},
                       {"tflops", r.tflops()},
                       {"pct_of_copy", pct.copy},
                       {"pct_of_matmul", pct.matmul},
                       {"pct_of_roofline", pct.roofline},
                       {"above_ceiling", above_ceiling(pct.roofline, r.bytes, llc_bytes)}};
  } else {
    j["timing"] = nullptr;
    j["throughput"] = nullptr;
  }
  return j;
}

json to_json(const Report& r) {
  json records = json::array();
  for (const auto& rec : r.records)
    records.push_back(to_json(rec, r.context.ceilings, r.context.device.l2_bytes));
  return {{"schema", kReportSchema}, {"context", to_json(r.context)}, {"records", records}};
}

Report report_from_json(const json& j, const std::string& origin) {
  const Reader top(j, origin + ":");
  const std::string schema = top.str("schema");
  if (schema != kReportSchema && schema != kReportSchemaV1)
    top.fail("has schema '" + schema + "', this wb reads '" + std::string(kReportSchema) + "' and '" +
             std::string(kReportSchemaV1) + "'");
  Report r;
  r.context = context_from(top.child("context"));
  const json& records = top.at("records");
  if (!records.is_array()) top.fail("'records' is not an array");
  for (std::size_t i = 0; i < records.size(); ++i)
    r.records.push_back(record_from(Reader(records[i], origin + ": records[" + std::to_string(i) + "]")));
  return r;
}

namespace {

// A report's text: its context indented for a reader, then one record a line. A report
// of thousands of records (results/emu/check.json holds over 9000) is a third smaller
// than indented throughout, which keeps the tree a GPU host is sent under its limit
// (tools/device/bundle.sh), and a diff of two reports still shows record by record which
// changed.
std::string report_text(const json& j) {
  std::string out = "{\n";
  bool first = true;
  for (const auto& [key, value] : j.items()) {
    out += first ? "  " : ",\n  ";
    first = false;
    out += json(key).dump() + ": ";
    if (key == "records" && value.is_array() && !value.empty()) {
      out += "[\n";
      for (std::size_t i = 0; i < value.size(); ++i) out += "    " + value[i].dump() + (i + 1 < value.size() ? ",\n" : "\n");
      out += "  ]";
      continue;
    }
    const std::string nested = value.dump(2);
    for (char c : nested) {
      out += c;
      if (c == '\n') out += "  ";
    }
  }
  return out + "\n}\n";
}

}  // namespace

void write_report(const Report& r, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) throw UsageError("cannot create the folder " + p.parent_path().string() + ": " + ec.message());
  }
  write_file_atomically(path, report_text(to_json(r)));
}

Report parse_report(std::string_view text, const std::string& origin) {
  const json j = parse_json(text, origin);
  Report r;
  try {
    r = report_from_json(j, origin);
  } catch (const json::exception& e) {
    throw UsageError(origin + ": not a wb.report report: " + e.what());
  }
  return r;
}

}  // namespace wb
