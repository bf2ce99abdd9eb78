// The counters' JSON (wb.report/2's optional "counters" of a record, docs/formats.md):
// apart from counters.cpp, which reaches into the emulator, so that the readers of
// reports (the fuzz targets among them) need none of it.
#include <limits>
#include <string>

#include "base/errors.h"
#include "workbench/runtime/counters.h"
#include "workbench/runtime/json_integer.h"

namespace wb {

using nlohmann::json;

std::string SiteCount::kind() const {
  if (collective) return "collective";
  return std::string(shared ? "shared " : "global ") + (store ? "store" : "load");
}

json to_json(const Counters& c) {
  json kernels = json::array();
  for (const KernelCount& k : c.kernels) {
    json jk = {{"kernel", k.kernel}, {"launches", k.launches}};
    if (k.library) {
      jk["library"] = true;
      jk["flops"] = k.flops;
      jk["bytes"] = k.bytes;
      if (!k.gemms.empty()) {
        json gemms = json::array();
        for (const KernelCount::Gemm& g : k.gemms)
          gemms.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"batch", g.batch}, {"calls", g.calls}});
        jk["gemms"] = gemms;
      }
      kernels.push_back(jk);
      continue;
    }
    jk["threads"] = k.threads;
    jk["dynamic_shared"] = k.dynamic_shared;
    jk["blocks"] = k.blocks;
    jk["counted_blocks"] = k.counted_blocks;
    jk["warps"] = k.warps;
    jk["counted_warps"] = k.counted_warps;
    auto footprint = [&k](const emu::LaunchCounters::Footprint& f) {
      json j{{"per_warp", f.per_warp}, {"distinct", f.distinct}, {"warps", f.warps}};
      // Block by block only where a grid's estimate needs it: counts of sampled blocks.
      if (k.counted_warps < k.warps) j["per_block"] = f.per_block, j["blocks"] = f.blocks;
      return j;
    };
    jk["footprint"] = {{"read_sectors", footprint(k.read_footprint)},
                       {"write_sectors", footprint(k.write_footprint)},
                       {"touched_bytes", k.touched_bytes},
                       {"atomic_ops", k.atomic_ops},
                       {"atomic_sector_ops", k.atomic_sector_ops},
                       {"atomic_sectors", footprint(k.atomic_sectors)}};
    json occupancy = json::object();
    for (const Occupancy& o : k.occupancy)
      occupancy["sm_" + std::to_string(o.compute_capability)] = {{"blocks_per_sm", o.blocks_per_sm},
                                                                  {"warps_per_sm", o.warps_per_sm},
                                                                  {"max_warps_per_sm", o.max_warps_per_sm},
                                                                  {"limit", o.limit}};
    jk["occupancy"] = occupancy;
    if (!k.occupancy_not_computed.empty()) jk["occupancy_not_computed"] = k.occupancy_not_computed;
    json sites = json::array();
    for (const SiteCount& s : k.sites) {
      json js = {{"site", s.site}, {"kind", s.kind()}, {"requests", s.requests}, {"active_lanes", s.active_lanes}};
      if (s.collective) {
        sites.push_back(js);
        continue;
      }
      js["bytes"] = s.bytes;
      if (s.shared) {
        js["wavefronts"] = s.wavefronts;
        js["ideal_wavefronts"] = s.ideal_wavefronts;
      } else {
        js["sectors"] = s.sectors;
        js["ideal_sectors"] = s.ideal_sectors;
      }
      sites.push_back(js);
    }
    jk["sites"] = sites;
    kernels.push_back(jk);
  }
  return {{"sample_blocks", c.sample_blocks}, {"kernels", kernels}};
}

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

const json& field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + " is not an object");
  auto it = j.find(key);
  if (it == j.end()) throw UsageError(where + " has no '" + key + "'");
  return *it;
}

uint64_t count(const json& j, const char* key, const std::string& where) {
  return uint64_t(json_integer(field(j, key, where), where + " '" + key + "'", 0, kMax));
}

std::string text(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_string()) throw UsageError(where + " '" + key + "' is not a string");
  return v.get<std::string>();
}

// Calls each(element, its place for messages: "where.key[i]") for each element of the
// array j[key].
template <class Each>
void for_each_element(const json& j, const char* key, const std::string& where, Each each) {
  const json& elements = field(j, key, where);
  if (!elements.is_array()) throw UsageError(where + " '" + key + "' is not an array");
  for (std::size_t i = 0; i < elements.size(); ++i)
    each(elements[i], where + "." + key + "[" + std::to_string(i) + "]");
}

}  // namespace

Counters counters_from_json(const json& j, const std::string& where) {
  Counters c;
  c.sample_blocks = count(j, "sample_blocks", where);
  for_each_element(j, "kernels", where, [&](const json& jk, const std::string& at) {
    KernelCount k;
    k.kernel = text(jk, "kernel", at);
    k.launches = count(jk, "launches", at);
    k.library = jk.is_object() && jk.contains("library") && jk.at("library") == true;
    if (k.library) {
      for (const char* key : {"flops", "bytes"}) {
        const json& v = field(jk, key, at);
        if (!v.is_number() || !(v.get<double>() >= 0)) throw UsageError(at + " '" + key + "' is not a count");
        (std::string(key) == "flops" ? k.flops : k.bytes) = v.get<double>();
      }
      if (jk.contains("gemms"))  // older counts have none: their calls are modelled without tiles
        for_each_element(jk, "gemms", at, [&](const json& jg, const std::string& gat) {
          KernelCount::Gemm g;
          for (auto [key, value] : {std::pair{"m", &g.m}, {"n", &g.n}, {"k", &g.k}, {"batch", &g.batch}})
            *value = int64_t(json_integer(field(jg, key, gat), gat + " '" + key + "'", 1, int64_t(1) << 40));
          g.calls = count(jg, "calls", gat);
          k.gemms.push_back(g);
        });
      c.kernels.push_back(std::move(k));
      return;
    }
    k.threads = int(json_integer(field(jk, "threads", at), at + " 'threads'", 1, 1024));
    k.dynamic_shared = count(jk, "dynamic_shared", at);
    k.blocks = count(jk, "blocks", at);
    k.counted_blocks = count(jk, "counted_blocks", at);
    k.warps = count(jk, "warps", at);
    k.counted_warps = count(jk, "counted_warps", at);
    if (jk.contains("footprint")) {  // absent from reports made before it was counted
      const json& jf = jk.at("footprint");
      const std::string atf = at + ".footprint";
      auto footprint = [&](const char* key) {
        const std::string atk = atf + "." + key;
        const json& jv = field(jf, key, atf);
        return emu::LaunchCounters::Footprint{count(jv, "per_warp", atk), count(jv, "distinct", atk),
                                              count(jv, "warps", atk),
                                              jv.contains("per_block") ? count(jv, "per_block", atk) : 0,
                                              jv.contains("blocks") ? count(jv, "blocks", atk) : 0};
      };
      k.read_footprint = footprint("read_sectors");
      k.write_footprint = footprint("write_sectors");
      k.touched_bytes = count(jf, "touched_bytes", atf);
      k.atomic_ops = count(jf, "atomic_ops", atf);
      k.atomic_sector_ops = count(jf, "atomic_sector_ops", atf);
      k.atomic_sectors = footprint("atomic_sectors");
    }
    const json& occupancy = field(jk, "occupancy", at);
    if (!occupancy.is_object()) throw UsageError(at + " 'occupancy' is not an object");
    for (const auto& [arch, jo] : occupancy.items()) {
      const std::string ato = at + ".occupancy." + arch;
      if (arch.rfind("sm_", 0) != 0) throw UsageError(ato + ": not an architecture (sm_80, sm_90)");
      Occupancy o;
      o.compute_capability = int(json_integer(json(std::atoi(arch.c_str() + 3)), ato, 10, 1000));
      o.blocks_per_sm = int(json_integer(field(jo, "blocks_per_sm", ato), ato + " 'blocks_per_sm'", 0, 1024));
      o.warps_per_sm = int(json_integer(field(jo, "warps_per_sm", ato), ato + " 'warps_per_sm'", 0, 1024));
      o.max_warps_per_sm = int(json_integer(field(jo, "max_warps_per_sm", ato), ato + " 'max_warps_per_sm'", 1, 1024));
      o.limit = text(jo, "limit", ato);
      k.occupancy.push_back(o);
    }
    if (jk.contains("occupancy_not_computed")) k.occupancy_not_computed = text(jk, "occupancy_not_computed", at);
    for_each_element(jk, "sites", at, [&](const json& js, const std::string& ats) {
      SiteCount site;
      site.site = text(js, "site", ats);
      const std::string kind = text(js, "kind", ats);
      if (kind != "global load" && kind != "global store" && kind != "shared load" && kind != "shared store" &&
          kind != "collective")
        throw UsageError(ats + " 'kind' is '" + kind + "', not global or shared load or store, or collective");
      site.requests = count(js, "requests", ats);
      site.active_lanes = count(js, "active_lanes", ats);
      if (kind == "collective") {
        site.collective = true;
        k.sites.push_back(std::move(site));
        return;
      }
      site.shared = kind.rfind("shared", 0) == 0;
      site.store = kind.find("store") != std::string::npos;
      site.bytes = int(json_integer(field(js, "bytes", ats), ats + " 'bytes'", 1, 16));
      if (site.shared) {
        site.wavefronts = count(js, "wavefronts", ats);
        site.ideal_wavefronts = count(js, "ideal_wavefronts", ats);
        if (site.ideal_wavefronts > site.wavefronts) throw UsageError(ats + ": fewer wavefronts than the ideal");
      } else {
        site.sectors = count(js, "sectors", ats);
        site.ideal_sectors = count(js, "ideal_sectors", ats);
        if (site.ideal_sectors > site.sectors) throw UsageError(ats + ": fewer sectors than the ideal");
      }
      k.sites.push_back(std::move(site));
    });
    c.kernels.push_back(std::move(k));
  });
  return c;
}

}  // namespace wb
