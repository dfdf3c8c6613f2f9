//===- describe.cpp - What a training program is (--print-config) ---------===//
//
// The program's --version and --print-config: everything the compiled model
// description (zrt/model.h) holds, printed without starting MPI or a GPU —
// the model and its shape, the partition (stage, world size, shard groups),
// the precision, the optimizer, the collectives with their buckets and
// start/wait pairs, and the memory and traffic plan per rank — so that a
// program file says what it was compiled with.
//
//===----------------------------------------------------------------------===//

#include "driver/describe.h"
#include "common/internal.h"

#include <nlohmann/json.hpp>

#include <cstdarg>
#include <cstdio>
#include <string>

namespace {

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...) {
  char buf[1024];
  va_list args;
  va_start(args, f);
  std::vsnprintf(buf, sizeof buf, f, args);
  va_end(args);
  return buf;
}

std::string mb(int64_t bytes) {
  return fmt("%.2f MB", static_cast<double>(bytes) / 1e6);
}

int64_t sum(const int64_t *v, int n) {
  int64_t s = 0;
  for (int i = 0; i < n; ++i)
    s += v[i];
  return s;
}

/// compile_info parsed, or an empty object when absent or unreadable.
nlohmann::json compileInfo(const zrt_model_desc *m) {
  if (!m->compile_info)
    return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(m->compile_info, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string collectives(const nlohmann::json &c) {
  auto n = [&](const char *k) { return c.value(k, int64_t(0)); };
  std::string out = fmt("all_gather %lld, reduce_scatter %lld, all_reduce %lld",
                        (long long)n("all_gather"), (long long)n("reduce_scatter"),
                        (long long)n("all_reduce"));
  out += fmt(" blocking; %lld start/wait", (long long)n("async"));
  if (n("bucketed"))
    out += fmt("; %lld buckets", (long long)n("bucketed"));
  return out;
}

} // namespace

std::string zrt::versionText(const zrt_model_desc *m) {
  nlohmann::json info = compileInfo(m);
  std::string out = fmt("%s: a Zero training program (runtime %s)\n",
                        m->name ? m->name : "model", zrt::runtimeVersion());
  out += "compiled by: " + info.value("compiler", std::string("(not recorded)")) +
         "\n";
  return out;
}

std::string zrt::describeProgram(const zrt_model_desc *m) {
  static const char *const kStates[5] = {"param", "grad", "master", "exp_avg",
                                         "exp_avg_sq"};
  static const char *const kArenas[7] = {
      "parameters", "gradients",   "master weights", "moments",
      "activations", "temporaries", "comm buffers"};
  nlohmann::json info = compileInfo(m);
  std::string out;
  auto line = [&](const std::string &s) { out += s + "\n"; };
  if (m->num_inputs > 0 && m->inputs) {
    // An array model: its named inputs (model.h zrt_input_desc).
    static const char *const kDtypes[5] = {"f32", "bf16", "f16", "i32", "i64"};
    std::string inputs;
    for (int i = 0; i < m->num_inputs; ++i) {
      const zrt_input_desc &in = m->inputs[i];
      inputs += fmt("%s%s %s [", i ? ", " : "", in.name ? in.name : "?",
                    in.dtype >= 0 && in.dtype < 5 ? kDtypes[in.dtype] : "?");
      for (int d = 0; d < in.rank; ++d)
        inputs += fmt(d ? ", %lld" : "%lld", (long long)in.shape[d]);
      inputs += "]";
    }
    line(fmt("model: %s | %lld parameters | micro-batch %lld samples per "
             "rank | inputs %s",
             m->name ? m->name : "?", (long long)m->num_params,
             (long long)m->batch, inputs.c_str()));
  } else {
    line(fmt("model: %s | %lld parameters | micro-batch %lld x %lld tokens "
             "per rank | vocab %lld (padded %lld)",
             m->name ? m->name : "?", (long long)m->num_params,
             (long long)m->batch, (long long)m->seq, (long long)m->vocab,
             (long long)m->padded_vocab));
  }
  line(fmt("partition: ZeRO stage %d | world size %d (mesh: 1-D data "
           "parallel, launch with mpirun -np %d) | %d shard groups",
           m->stage, m->world_size, m->world_size, m->num_groups));
  line("precision: " + info.value("precision", std::string("(not recorded)")));
  if (info.contains("optimizer") && info["optimizer"].is_object()) {
    const nlohmann::json &o = info["optimizer"];
    line(fmt("optimizer: %s beta1 %g beta2 %g eps %g weight decay %g",
             o.value("type", std::string("AdamW")).c_str(),
             o.value("beta1", 0.0), o.value("beta2", 0.0), o.value("eps", 0.0),
             o.value("weight_decay", 0.0)));
  }
  if (info.contains("max_grad_norm")) {
    double norm = info.value("max_grad_norm", 0.0);
    line(norm > 0 ? fmt("gradient clipping: global norm %g", norm)
                  : std::string("gradient clipping: none"));
  }
  if (info.contains("collectives") && info["collectives"].is_object())
    for (const char *fn : {"forward_backward", "optimizer_step"})
      if (info["collectives"].contains(fn))
        line(fmt("collectives in %s: ", fn) +
             collectives(info["collectives"][fn]));
  std::string states = "model state per rank (plan):";
  for (int k = 0; k < 5; ++k)
    states += fmt(" %s %s%s", kStates[k], mb(m->plan.state_bytes[k]).c_str(),
                  k < 4 ? "," : "");
  if (m->plan.padding_bytes)
    states += fmt(" (%s of it shard padding)", mb(m->plan.padding_bytes).c_str());
  line(states);
  if (sum(m->plan.arena_bytes, 7) > 0) {
    std::string arenas = "memory plan per rank:";
    for (int k = 0; k < 7; ++k)
      if (m->plan.arena_bytes[k] > 0)
        arenas += fmt(" %s %s,", kArenas[k], mb(m->plan.arena_bytes[k]).c_str());
    arenas += " total " + mb(sum(m->plan.arena_bytes, 7));
    line(arenas);
  }
  line(fmt("traffic per rank: %lld B per forward_backward, %lld B per "
           "optimizer_step",
           (long long)sum(m->plan.comm_bytes_micro, 4),
           (long long)sum(m->plan.comm_bytes_step, 4)));
  line("compiled by: " +
       info.value("compiler", std::string("(not recorded)")));
  if (info.contains("compile_flags"))
    line("compile pipeline: " + info.value("compile_flags", std::string()));
  line(fmt("runtime: %s", zrt::runtimeVersion()));
  return out;
}
