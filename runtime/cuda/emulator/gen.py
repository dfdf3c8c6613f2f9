#!/usr/bin/env python3
"""Transforms CUDA sources of runtime/cuda into host C++ for the emulator.

    gen.py OUT_DIR SRC [SRC ...]

For each SRC (a .cu or .cuh file of runtime/cuda, read at build time, never
copied into the repository) writes OUT_DIR/<name> (.cu -> .cpp) with:
  * every <<<grid, block, smem, stream()>>> launch turned into
    emu::launchOn(stream(), dim3(grid), dim3(block), smem,
                  [=] { kernel(args); });
    (queued on the emulated stream, arguments captured by value);
  * extern __shared__ arrays (macros) bound to the emulator's dynamic shared memory:
    the PROT_NONE view for files with a DEVICE PRIMITIVES block (all their
    shared accesses go through the emulated primitives), else the plain one;
  * static __shared__ variables made function statics (blocks run one after
    another);
  * the DEVICE PRIMITIVES block (flash_attention_tc.cu) replaced by
    #include "prims_<stem>.h" (this directory);
  * 16/8/4-byte vector accesses through reinterpret_cast (uint4, float4,
    float2, uint32_t) checked for alignment;
  * a few grid-size limits replaced by emulator knobs (HOOKS below), so
    tests can reach the kernels' work loops with small shapes.
Line numbers are kept (replacements are padded with newlines and the output
starts with #line), so diagnostics, EMU ERROR messages and __syncthreads
tags name lines of the real source. Every expected pattern is asserted: a
change to a kernel file that the emulator cannot follow fails the build.
"""
import os
import re
import sys

# (file, exact text, replacement, expected count)
HOOKS = [
    ('flash_attention_tc.cu', 'constexpr int64_t kTcMaxGrid = 2147483647;',
     'static const int64_t &kTcMaxGrid = emu::tcMaxGrid;', 1),
    ('flash_attention.cu', 'slices < 65535 ? slices : 65535',
     'slices < emu::ySlicesCap ? slices : emu::ySlicesCap', 2),
    ('loss.cu', 'constexpr int64_t kLossMaxRowBlocks = int64_t(1) << 16;',
     'static const int64_t &kLossMaxRowBlocks = emu::lossMaxRowBlocks;', 1),
]


def fail(msg):
    sys.exit('gen.py: ' + msg)


def pad(old, new):
    """new, with newlines appended so it spans as many lines as old (line
    continuations when old continues a macro definition)."""
    d = old.count('\n') - new.count('\n')
    if d < 0:
        fail('replacement longer than the original:\n' + old)
    return new + (' \\\n' if '\\\n' in old else '\n') * d


def matching(s, i, open_ch, close_ch):
    """Index of the bracket closing the one at s[i]."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_ch:
            depth += 1
        elif s[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j
    fail('unbalanced %s at %d' % (open_ch, i))


def split_top(x):
    parts, depth, cur = [], 0, ''
    for ch in x:
        if ch in '([{':
            depth += 1
        if ch in ')]}':
            depth -= 1
        if ch == ',' and depth == 0:
            parts.append(cur.strip())
            cur = ''
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def launches(s):
    out, pos, n = '', 0, 0
    while True:
        i = s.find('<<<', pos)
        if i < 0:
            return out + s[pos:], n
        # Kernel name: identifier (with ::), optional template arguments.
        k = i
        while s[k - 1].isspace():
            k -= 1
        if s[k - 1] == '>':
            depth = 0
            while True:
                k -= 1
                if s[k] == '>':
                    depth += 1
                elif s[k] == '<':
                    depth -= 1
                    if depth == 0:
                        break
        while s[k - 1].isalnum() or s[k - 1] in '_:':
            k -= 1
        kernel = s[k:i].strip()
        j = s.index('>>>', i)
        cfg = split_top(s[i + 3:j])
        if len(cfg) != 4 or cfg[3] != 'stream()':
            fail('launch of %s: expected <<<grid, block, smem, stream()>>>' % kernel)
        p = j + 3
        while s[p].isspace():
            p += 1
        if s[p] != '(':
            fail('launch of %s: no argument list' % kernel)
        q = matching(s, p, '(', ')')
        if s[q + 1] != ';':
            fail('launch of %s: not a statement' % kernel)
        old = s[k:q + 2]
        # By value: the launch may run later (emulated streams), with the
        # arguments as they were at the call, as on a GPU.
        new = 'emu::launchOn(%s, dim3(%s), dim3(%s), %s, [=] { %s(%s); });' % (
            cfg[3], cfg[0], cfg[1], cfg[2], kernel, s[p + 1:q])
        new = re.sub(r'\\?\n', ' ', new)
        out += s[pos:k] + pad(old, new)
        pos = q + 2
        n += 1


def aligned_vectors(s):
    """*reinterpret_cast<[const] uint4|float4|float2|uint32_t *>(e) -> checked."""
    key = re.compile(
        r'\*reinterpret_cast<((?:const )?(?:uint4|float4|float2|uint32_t)) \*>\(')
    out, pos = '', 0
    for m in key.finditer(s):
        if m.start() < pos:
            continue
        p = m.end() - 1
        q = matching(s, p, '(', ')')
        out += s[pos:m.start()] + '*emu::aligned(reinterpret_cast<%s *>(%s))' % (
            m.group(1), s[p + 1:q])
        pos = q + 1
    return out + s[pos:]


def transform(path, s):
    name = os.path.basename(path)
    stem = os.path.splitext(name)[0]
    guarded = 'BEGIN DEVICE PRIMITIVES' in s
    if guarded:
        b = s.rindex('\n', 0, s.index('BEGIN DEVICE PRIMITIVES')) + 1
        e = s.index('\n', s.index('END DEVICE PRIMITIVES'))
        s = s[:b] + pad(s[b:e], '#include "prims_%s.h"' % stem) + s[e:]
    for f, old, new, count in HOOKS:
        if f == name:
            if s.count(old) != count:
                fail('%s: expected %d x "%s"' % (name, count, old))
            s = s.replace(old, new)
    view = 'emu::smemView' if guarded else 'emu::smemRW'

    def ext(m):
        # A macro, not a variable: also right at namespace scope (read at
        # every use, after the launch mapped the memory).
        return '#define %s (reinterpret_cast<%s *>(%s))' % (m.group(3), m.group(2), view)
    s = re.sub(r'extern __shared__ (__align__\(\d+\) )?([\w: ]+?) (\w+)\[\];', ext, s)
    if 'extern __shared__' in s:
        fail('%s: unrecognized extern __shared__ declaration' % name)
    s = re.sub(r'(?<!\w)__shared__ ', 'static ', s)
    s = aligned_vectors(s)
    s, n = launches(s)
    if '<<<' in s or '__shared__' in s or (guarded and 'asm' in s.split('prims_')[1]):
        fail('%s: untransformed CUDA syntax left' % name)
    return '#line 1 "%s"\n' % os.path.abspath(path) + s, n


def main():
    if len(sys.argv) < 3:
        fail('usage: gen.py OUT_DIR SRC [SRC ...]')
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for src in sys.argv[2:]:
        with open(src) as f:
            s = f.read()
        t, n = transform(src, s)
        name = os.path.basename(src)
        if name.endswith('.cu'):
            name = name[:-3] + '.cpp'
        dst = os.path.join(out_dir, name)
        old = None
        if os.path.exists(dst):
            with open(dst) as f:
                old = f.read()
        if old != t:
            with open(dst, 'w') as f:
                f.write(t)
        print('gen.py: %s -> %s (%d launches)' % (src, dst, n))


if __name__ == '__main__':
    main()
