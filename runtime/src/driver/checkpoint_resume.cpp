//===- checkpoint_resume.cpp - --resume -----------------------------------===//
//
// Finding a checkpoint (a step directory, or a checkpoint directory's
// `latest`), checking it before init (manifest, model fingerprint, every
// shard file present and complete, checksums spread over the ranks), and
// loading it after init.
//
// Loading at the same layout (world size, stage, groups, states) copies each
// rank's own file into its states byte for byte. Otherwise every state is
// rebuilt from per-parameter tensors: for each (parameter, kind) the whole
// unpadded tensor is read out of whichever states held it when saved (whole
// in rank 0's file, or slices of a shard group spread over the files), and
// the new layout's whole state or shard slice is cut from it; padding is
// zero. On a mesh N_d x M (rank d x M + t), tensor rank t's cut of a
// parameter lies in the files of ranks t, M + t, ...; a cut that differs
// from the checkpoint's (another M) is re-cut through the whole tensor,
// assembled from every saved tensor rank's cut. Every rank reads the files it needs itself (no MPI), so the step
// directory must be readable from every rank, like an --import file.
// Re-partitioning rules: docs/checkpoints.md.
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint.h"
#include "driver/checkpoint_impl.h"

#include "driver/fileio.h"
#include "driver/paths.h"
#include "driver/state_io.h"
#include "driver/strformat.h"
#include "zrt/zrt.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace zrt_ckpt {

using zrt::format;
using zrt::isFile;
using zrt::kStateKindNames;

std::string Checkpointer::open(const std::string &path) {
  Impl &I = *impl_;
  if (std::string err = I.ensureLayout(); !err.empty())
    return err;
  // A step directory, or a checkpoint directory and its `latest`.
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return format("--resume: no checkpoint in '%s' (%s)", path.c_str(),
                  std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return format("--resume: no checkpoint in '%s' (it is a file; --resume "
                  "takes a step directory or a checkpoint directory)",
                  path.c_str());
  if (!isFile(dir + "/manifest.json")) {
    std::string latest;
    if (std::FILE *f = std::fopen((dir + "/latest").c_str(), "r")) {
      char buf[256] = {};
      if (std::fgets(buf, sizeof buf, f))
        latest = buf;
      std::fclose(f);
    }
    while (!latest.empty() && (latest.back() == '\n' || latest.back() == ' '))
      latest.pop_back();
    if (latest.empty())
      return format("--resume: no checkpoint in '%s' (neither manifest.json "
                    "nor a 'latest' pointer)",
                    path.c_str());
    // Only a complete step directory: never a temporary one of a save in
    // progress (.step_N.tmp), nor a path elsewhere.
    if (!zrt::isStepDirName(latest))
      return format("--resume: '%s/latest' names '%s', which is not a step "
                    "directory (step_<N>)",
                    path.c_str(), latest.c_str());
    dir += "/" + latest;
    if (!isFile(dir + "/manifest.json"))
      return format("--resume: '%s/latest' names %s, which has no "
                    "manifest.json",
                    path.c_str(), latest.c_str());
  }
  I.res.dir = dir;
  const std::string mpath = dir + "/manifest.json";
  std::string text;
  if (std::FILE *f = std::fopen(mpath.c_str(), "rb")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
      text.append(buf, n);
    std::fclose(f);
  } else {
    return format("--resume: cannot read '%s': %s", mpath.c_str(),
                  std::strerror(errno));
  }
  std::string fp;
  int64_t fileBytes = 0;
  if (std::string err =
          parseManifestText(text, dir, &I.old, &I.res, &I.files, &fp,
                            &fileBytes, &I.manifestUnchecked);
      !err.empty())
    return err;
  // The same model?
  const std::string mine = hex64(I.cur.fingerprint());
  if (fp != mine || hex64(I.old.fingerprint()) != fp) {
    std::string diff;
    for (const ParamRec &p : I.cur.params) {
      const ParamRec *o = I.old.param(p.name);
      if (!o)
        diff = format("parameter '%s' is not in the checkpoint",
                      p.name.c_str());
      else if (o->wholeShape() != p.wholeShape())
        diff = format("parameter '%s' has another shape in the checkpoint",
                      p.name.c_str());
      if (!diff.empty())
        break;
    }
    if (diff.empty() && I.old.params.size() != I.cur.params.size())
      diff = format("the checkpoint has %zu parameters, this model %zu",
                    I.old.params.size(), I.cur.params.size());
    return format("checkpoint '%s' is of a different model (fingerprint %s, "
                  "this program's %s)%s%s",
                  dir.c_str(), fp.c_str(), mine.c_str(),
                  diff.empty() ? "" : ": ", diff.c_str());
  }
  // Every shard file present and complete (all ranks check all: cheap).
  for (int r = 0; r < I.old.world; ++r) {
    struct stat st;
    const std::string p = I.filePath(r);
    if (::stat(p.c_str(), &st) != 0)
      return format("checkpoint '%s': shard file %s of rank %d is missing",
                    dir.c_str(), I.files[r].first.c_str(), r);
    if (!S_ISREG(st.st_mode))
      return format("checkpoint '%s': shard file %s of rank %d is not a "
                    "regular file (a directory?)",
                    dir.c_str(), I.files[r].first.c_str(), r);
    if (st.st_size != fileBytes)
      return format("checkpoint '%s': shard file %s is truncated or damaged "
                    "(%lld bytes, the manifest says %lld)",
                    dir.c_str(), I.files[r].first.c_str(),
                    (long long)st.st_size, (long long)fileBytes);
  }
  // Checksums, spread over the ranks.
  for (int r = I.rank; r < I.old.world; r += I.world)
    if (std::string err = I.verify(r); !err.empty())
      return err;
  I.res.resharded = !I.cur.sameAs(I.old);
  return "";
}

std::string Checkpointer::Impl::readTensor(const std::string &param, int kind,
                                           int dtype, int part, int64_t lo,
                                           int64_t hi, void *dst) {
  // The source kind: the same one, with the f32 master weights standing in
  // for parameters of another dtype and parameters for missing masters.
  auto find = [&](int k) -> const Loc * {
    auto it = old.locs.find({param, k});
    return it == old.locs.end() ? nullptr : &it->second;
  };
  const Loc *loc = find(kind);
  if (kind == ZRT_STATE_PARAM) {
    const Loc *master = find(ZRT_STATE_MASTER);
    if (master && (!loc || old.states[loc->state].dtype != dtype))
      loc = master;
  } else if (kind == ZRT_STATE_MASTER && !loc) {
    loc = find(ZRT_STATE_PARAM);
  }
  if (!loc)
    return format("checkpoint '%s' holds no %s of parameter '%s' (was it "
                  "frozen when saved?)",
                  res.dir.c_str(), kStateKindNames[kind], param.c_str());
  const StateRec &s = old.states[loc->state];
  // Rank d x M + part holds data shard d of tensor rank part's cut.
  if (!loc->sharded) // whole: identical on every data rank; data rank 0's
    return readRaw(s, part, lo, hi, dtype, dst);
  // Slices of a shard group: flat elements [off+lo, off+hi) over the files.
  const int64_t S = old.groups[s.group].shard;
  char *out = static_cast<char *>(dst);
  for (int64_t e = loc->offset + lo, end = loc->offset + hi; e < end;) {
    const int q = static_cast<int>(e / S);
    const int64_t stop = std::min(end, (q + 1) * S);
    if (std::string err = readRaw(s, q * old.tensor + part, e - q * S,
                                  stop - q * S, dtype, out);
        !err.empty())
      return err;
    out += (stop - e) * static_cast<int64_t>(zrt::elementBytes(dtype));
    e = stop;
  }
  return "";
}

std::string Checkpointer::Impl::readLocal(const std::string &param, int kind,
                                          int dtype, int64_t lo, int64_t hi,
                                          void *dst) {
  const ParamRec *now = cur.param(param), *was = old.param(param);
  if (!now || !was) // open() checked both models have the same parameters
    return format("checkpoint '%s' has no parameter '%s'", res.dir.c_str(),
                  param.c_str());
  // Cut alike (or whole in both): this tensor rank's elements as saved.
  if (now->sameCut(*was))
    return readTensor(param, kind, dtype, now->isCut() ? tensorRank : 0, lo,
                      hi, dst);
  // Else the whole tensor from every saved cut, then this rank's cut of it.
  const size_t eb = zrt::elementBytes(dtype);
  const zrt::TensorCut from = was->cut(), to = now->cut();
  std::vector<char> whole(static_cast<size_t>(from.wholeNumel()) * eb), part;
  if (!was->isCut()) {
    if (std::string err =
            readTensor(param, kind, dtype, 0, 0, was->numel, whole.data());
        !err.empty())
      return err;
  } else {
    part.resize(static_cast<size_t>(was->numel) * eb);
    for (int t = 0; t < old.tensor; ++t) {
      if (std::string err =
              readTensor(param, kind, dtype, t, 0, was->numel, part.data());
          !err.empty())
        return err;
      from.forEachRun(t, 0, was->numel, [&](int64_t l, int64_t w, int64_t n) {
        std::memcpy(whole.data() + w * eb, part.data() + l * eb, n * eb);
      });
    }
  }
  char *out = static_cast<char *>(dst);
  to.forEachRun(now->isCut() ? tensorRank : 0, lo, hi,
                [&](int64_t l, int64_t w, int64_t n) {
                  std::memcpy(out + (l - lo) * eb, whole.data() + w * eb,
                              n * eb);
                });
  return "";
}

std::string Checkpointer::load() {
  Impl &I = *impl_;
  std::string err;
  // Each state is assembled in host memory, then copied to its arena
  // memory (state_io.h: device memory on a device backend).
  std::vector<char> staged;
  if (!I.res.resharded) {
    // Same layout: this rank's file, byte for byte (padding as stored).
    for (const StateRec &s : I.cur.states) {
      const int64_t bytes = s.numel * static_cast<int64_t>(zrt::elementBytes(s.dtype));
      staged.resize(static_cast<size_t>(bytes));
      err = I.readRaw(I.old.states[&s - I.cur.states.data()], I.rank, 0,
                      s.numel, s.dtype, staged.data());
      if (err.empty())
        err = zrt::stageToDevice(I.m->states[s.index].data, staged.data(),
                                 bytes);
      if (!err.empty())
        break;
    }
  } else {
    for (const StateRec &s : I.cur.states) {
      const size_t eb = zrt::elementBytes(s.dtype);
      staged.resize(static_cast<size_t>(s.numel) * eb);
      void *data = staged.data();
      if (!s.sharded) {
        // A whole state: of a parameter, or matched by name.
        std::string param;
        for (const auto &[key, loc] : I.cur.locs)
          if (!loc.sharded && &I.cur.states[loc.state] == &s)
            param = key.first;
        if (!param.empty()) {
          err = I.readLocal(param, s.kind, s.dtype, 0, s.numel, data);
        } else {
          auto it = I.old.extra.find(s.name);
          const StateRec *o = it == I.old.extra.end()
                                  ? nullptr
                                  : &I.old.states[it->second];
          if (!o || o->sharded || o->kind != s.kind || o->numel != s.numel)
            err = format("checkpoint '%s' has no state '%s' to restore",
                         I.res.dir.c_str(), s.name.c_str());
          else
            err = I.readRaw(*o, 0, 0, s.numel, s.dtype, data);
        }
      } else {
        // This rank's slice of the group: members cut from the whole
        // per-parameter tensors, zero padding.
        std::memset(data, 0, static_cast<size_t>(s.numel) * eb);
        const GroupRec &g = I.cur.groups[s.group];
        const int64_t own = static_cast<int64_t>(I.dataRank) * g.shard;
        for (const MemberRec &mem : g.members) {
          const int64_t lo = std::max(own, mem.offset),
                        hi = std::min(own + g.shard, mem.offset + mem.numel);
          if (lo >= hi)
            continue;
          err = I.readLocal(mem.name, s.kind, s.dtype, lo - mem.offset,
                            hi - mem.offset,
                            static_cast<char *>(data) + (lo - own) * eb);
          if (!err.empty())
            break;
        }
      }
      if (err.empty())
        err = zrt::stageToDevice(I.m->states[s.index].data, staged.data(),
                                 static_cast<int64_t>(staged.size()));
      if (!err.empty())
        break;
    }
  }
  for (int &fd : I.fds)
    if (fd >= 0)
      ::close(fd), fd = -1;
  return err;
}

} // namespace zrt_ckpt
