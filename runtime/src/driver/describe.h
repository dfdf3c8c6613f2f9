//===- describe.h - What a training program is (--print-config) -*- C++ -*-===//
#ifndef ZRT_DESCRIBE_H
#define ZRT_DESCRIBE_H

#include "zrt/model.h"

#include <string>

namespace zrt {

/// --version: the model's name, the runtime's version, and the compiler's
/// (zrt_model_desc::compile_info), two lines.
std::string versionText(const zrt_model_desc *m);

/// --print-config: one line each for the model, the partition, the
/// precision, the optimizer, clipping, the collectives per function, the
/// model-state and arena plan per rank, the traffic plan, the compiler and
/// the runtime. Everything comes from `m`; nothing is allocated or started.
std::string describeProgram(const zrt_model_desc *m);

} // namespace zrt

#endif // ZRT_DESCRIBE_H
