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
#include "driver/strformat.h"

#include <nlohmann/json.hpp>

#include <cstdarg>
#include <cstdio>
#include <string>

namespace {

using zrt::format;
using zrt::kStateKindNames;
using zrt::megabytes;

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
  std::string out = format("all_gather %lld, reduce_scatter %lld, all_reduce %lld",
                        (long long)n("all_gather"), (long long)n("reduce_scatter"),
                        (long long)n("all_reduce"));
  out += format(" blocking; %lld start/wait", (long long)n("async"));
  if (n("bucketed"))
    out += format("; %lld buckets", (long long)n("bucketed"));
  return out;
}

} // namespace

std::string zrt::versionText(const zrt_model_desc *m) {
  nlohmann::json info = compileInfo(m);
  std::string out = format("%s: a Zero training program (runtime %s)\n",
                        m->name ? m->name : "model", zrt::runtimeVersion());
  out += "compiled by: " + info.value("compiler", std::string("(not recorded)")) +
         "\n";
  return out;
}

std::string zrt::describeProgram(const zrt_model_desc *m) {
  static const char *const kArenas[7] = {
      "parameters", "gradients",   "master weights", "moments",
      "activations", "temporaries", "comm buffers"};
  nlohmann::json info = compileInfo(m);
  std::string out;
  auto line = [&](const std::string &s) { out += s + "\n"; };
  if (m->num_inputs > 0 && m->inputs) {
    // An array model: its named inputs (model.h zrt_input_desc).
    std::string inputs;
    for (int i = 0; i < m->num_inputs; ++i) {
      const zrt_input_desc &in = m->inputs[i];
      inputs += format("%s%s %s [", i ? ", " : "", in.name ? in.name : "?",
                    dtypeText(in.dtype));
      for (int d = 0; d < in.rank; ++d)
        inputs += format(d ? ", %lld" : "%lld", (long long)in.shape[d]);
      inputs += "]";
    }
    line(format("model: %s | %lld parameters | micro-batch %lld samples per "
             "rank | inputs %s",
             m->name ? m->name : "?", (long long)m->num_params,
             (long long)m->batch, inputs.c_str()));
  } else {
    line(format("model: %s | %lld parameters | micro-batch %lld x %lld tokens "
             "per rank | vocab %lld (padded %lld)",
             m->name ? m->name : "?", (long long)m->num_params,
             (long long)m->batch, (long long)m->seq, (long long)m->vocab,
             (long long)m->padded_vocab));
  }
  line(format("partition: ZeRO stage %d | world size %d (mesh: 1-D data "
           "parallel, launch with mpirun -np %d) | %d shard groups",
           m->stage, m->world_size, m->world_size, m->num_groups));
  line("precision: " + info.value("precision", std::string("(not recorded)")));
  if (info.contains("optimizer") && info["optimizer"].is_object()) {
    const nlohmann::json &o = info["optimizer"];
    line(format("optimizer: %s beta1 %g beta2 %g eps %g weight decay %g",
             o.value("type", std::string("AdamW")).c_str(),
             o.value("beta1", 0.0), o.value("beta2", 0.0), o.value("eps", 0.0),
             o.value("weight_decay", 0.0)));
  }
  if (info.contains("max_grad_norm")) {
    double norm = info.value("max_grad_norm", 0.0);
    line(norm > 0 ? format("gradient clipping: global norm %g", norm)
                  : std::string("gradient clipping: none"));
  }
  if (info.contains("collectives") && info["collectives"].is_object())
    for (const char *fn : {"forward_backward", "optimizer_step"})
      if (info["collectives"].contains(fn))
        line(format("collectives in %s: ", fn) +
             collectives(info["collectives"][fn]));
  std::string states = "model state per rank (plan):";
  for (int k = 0; k < 5; ++k)
    states += format(" %s %s%s", kStateKindNames[k], megabytes(m->plan.state_bytes[k]).c_str(),
                  k < 4 ? "," : "");
  if (m->plan.padding_bytes)
    states += format(" (%s of it shard padding)", megabytes(m->plan.padding_bytes).c_str());
  line(states);
  if (sum(m->plan.arena_bytes, 7) > 0) {
    std::string arenas = "memory plan per rank:";
    for (int k = 0; k < 7; ++k)
      if (m->plan.arena_bytes[k] > 0)
        arenas += format(" %s %s,", kArenas[k], megabytes(m->plan.arena_bytes[k]).c_str());
    arenas += " total " + megabytes(sum(m->plan.arena_bytes, 7));
    line(arenas);
  }
  line(format("traffic per rank: %lld B per forward_backward, %lld B per "
           "optimizer_step",
           (long long)sum(m->plan.comm_bytes_micro, 4),
           (long long)sum(m->plan.comm_bytes_step, 4)));
  line("compiled by: " +
       info.value("compiler", std::string("(not recorded)")));
  if (info.contains("compile_flags"))
    line("compile pipeline: " + info.value("compile_flags", std::string()));
  line(format("runtime: %s", zrt::runtimeVersion()));
  return out;
}
