#!/usr/bin/env python3
"""Prints a train module (as zero-opt prints it) up to names, for comparing
zero-import's GPT-2 with zero-model's (test/Tools/zero-import-gpt2-ir.test).

  * parameter symbols become @p0, @p1, ... in declaration order, and their
    initializers are dropped (the importer's come from Hugging Face's
    config, zero-model's from nanoGPT's scaled init: the weights file, not
    the IR, carries the initial values);
  * the operands of commutative ops (train.add, train.mul) are sorted;
  * a 2-D parameter that every matmul reads untransposed as its right
    operand (Hugging Face's Conv1D stores [in, out]; nn.Linear and
    zero-model store [out, in]) is printed in the [out, in] layout with
    `{transpose_b}`: the same product on the transposed storage.
Prints on stderr how many parameters the last rule rewrote.
"""
import re
import sys

SYM = r'@(?:"(?:[^"\\]|\\.)*"|[A-Za-z_][\w$.]*)'
PARAM = re.compile(r"^(\s*)train\.param (" + SYM + r") : (tensor<[^>]*>) init\(.*?\)( trainable)?\s*$")
LOAD = re.compile(r"^(\s*)(%\S+) = train\.load (" + SYM + r") : (tensor<[^>]*>)\s*$")
MATMUL = re.compile(r"^(\s*)(%\S+) = train\.matmul (%\S+), (%\S+)( bias %\S+)?( \{[^}]*\})? : (.*) -> (tensor<[^>]*>)\s*$")
COMMUTATIVE = re.compile(r"^(\s*)(%\S+) = train\.(add|mul) (%\S+), (%\S+) : (.*)$")


def swap(ty):
    m = re.match(r"tensor<(\d+)x(\d+)x(\w+)>", ty)
    return "tensor<%sx%sx%s>" % (m.group(2), m.group(1), m.group(3))


def main():
    lines = open(sys.argv[1]).read().splitlines()
    names, order = {}, []
    for line in lines:
        m = PARAM.match(line)
        if m:
            names[m.group(2)] = "@p%d" % len(names)
            order.append(m.group(2))
    # Which parameters matmuls read untransposed as the right operand.
    loads, plain, transposed = {}, set(), set()
    for line in lines:
        m = LOAD.match(line)
        if m:
            loads[m.group(2)] = m.group(3)
        m = MATMUL.match(line)
        if m and m.group(4) in loads:
            flags = m.group(6) or ""
            (transposed if "transpose_b" in flags else plain).add(loads[m.group(4)])
    conv1d = {p for p in plain - transposed}
    out = []
    for line in lines:
        m = PARAM.match(line)
        if m:
            ty = swap(m.group(3)) if m.group(2) in conv1d else m.group(3)
            out.append("%strain.param %s : %s%s" % (m.group(1), names[m.group(2)], ty,
                                                    m.group(4) or ""))
            continue
        m = LOAD.match(line)
        if m:
            ty = swap(m.group(4)) if m.group(3) in conv1d else m.group(4)
            out.append("%s%s = train.load %s : %s" % (m.group(1), m.group(2),
                                                      names[m.group(3)], ty))
            continue
        m = MATMUL.match(line)
        if m and loads.get(m.group(4)) in conv1d:
            types = [t.strip() for t in re.findall(r"tensor<[^>]*>", m.group(7))]
            types[1] = swap(types[1])
            flags = m.group(6) or ""
            flags = " {%s}" % ", ".join([f for f in flags.strip(" {}").split(", ") if f] + ["transpose_b"])
            out.append("%s%s = train.matmul %s, %s%s%s : %s -> %s" % (
                m.group(1), m.group(2), m.group(3), m.group(4), m.group(5) or "", flags,
                ", ".join(types), m.group(8)))
            continue
        m = COMMUTATIVE.match(line)
        if m:
            a, b = sorted((m.group(4), m.group(5)))
            out.append("%s%s = train.%s %s, %s : %s" % (m.group(1), m.group(2), m.group(3),
                                                        a, b, m.group(6)))
            continue
        out.append(re.sub(SYM, lambda s: names.get(s.group(0), s.group(0)), line))
    print("\n".join(out))
    print("canonical_ir: %d parameters, %d in Conv1D layout rewritten"
          % (len(names), len(conv1d)), file=sys.stderr)


if __name__ == "__main__":
    main()
