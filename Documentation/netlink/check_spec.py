#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Check that the YNL spec and the C uapi header describe the same family:
# the family name and version, every attribute of every set and every
# command with the same C name and value, the *_MAX defines, the constants,
# and the ranges of the checks.  The kernel's ynl-gen-c.py would generate the
# header from the spec; this tree keeps both by hand, so this keeps them in
# step.
#
#   check_spec.py SPEC.yaml HEADER.h

import re
import sys

import yaml


def c_name(*parts):
    return "_".join(p for p in parts if p).upper().replace("-", "_")


def parse_header(text):
    """Return {name: value} for #defines with integer or string values and
    for the members of anonymous enums."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    values = {}
    for m in re.finditer(r"^#define\s+(\w+)\s+(.+)$", text, re.M):
        values[m.group(1)] = m.group(2).strip()
    for body in re.findall(r"enum\s*\{(.*?)\}", text, re.S):
        nxt = 0
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            name, _, val = item.partition("=")
            name = name.strip()
            if val.strip():
                nxt = int(val.strip(), 0)
            values[name] = nxt
            nxt += 1
    return values


def evaluate(expr, values):
    """Evaluate a #define body made of integers, shifts and other defines."""
    expr = str(expr)
    expr = re.sub(r"\b(\d+)(ULL|UL|U|LL|L)\b", r"\1", expr)
    expr = re.sub(r"\b(0x[0-9a-fA-F]+)(ULL|UL|U|LL|L)\b", r"\1", expr)

    def sub(m):
        name = m.group(0)
        if name in values:
            return "(%s)" % evaluate(values[name], values)
        return name

    expr = re.sub(r"\b[A-Za-z_]\w*\b", sub, expr)
    return eval(expr, {"__builtins__": {}})  # only digits and operators left


LIMITS = {
    "u8-max": 0xff, "u16-max": 0xffff, "u32-max": 0xffffffff,
    "u64-max": 0xffffffffffffffff, "s8-min": -0x80, "s16-min": -0x8000,
    "s32-min": -0x80000000,
}


def main():
    spec = yaml.safe_load(open(sys.argv[1]))
    hdr = parse_header(open(sys.argv[2]).read())
    errors = []

    def expect(name, want):
        if name not in hdr:
            errors.append("%s: missing from the header" % name)
            return
        try:
            got = evaluate(hdr[name], hdr)
        except Exception:
            got = hdr[name]
        if got != want:
            errors.append("%s: header says %r, spec says %r" % (name, got, want))

    fam = spec["name"]
    expect(c_name(spec.get("c-family-name", fam + "-family-name")), fam)
    expect(c_name(spec.get("c-version-name", fam + "-family-version")),
           spec.get("version", 1))

    consts = {}
    for d in spec.get("definitions", []):
        if d["type"] == "const":
            consts[d["name"]] = d["value"]
            expect(c_name(fam, d["name"]), d["value"])

    for aset in spec["attribute-sets"]:
        prefix = aset.get("name-prefix", "%s-a-%s-" % (fam, aset["name"]))
        val = 1
        for attr in aset["attributes"]:
            val = attr.get("value", val)
            expect(c_name(prefix + attr["name"]), val)
            # A "<attr>-limit" constant is the largest value the attr takes.
            limit = consts.get(attr["name"] + "-limit")
            top = attr.get("checks", {}).get("max")
            if limit is not None and LIMITS.get(top, top) != limit:
                errors.append("%s: checks max %r, but %s-limit is %r" %
                              (attr["name"], top, attr["name"], limit))
            val += 1
        if spec.get("max-by-define"):
            expect(c_name(prefix + "max"), val - 1)

    ops = spec["operations"]
    prefix = ops.get("name-prefix", "%s-cmd-" % fam)
    val = 1
    for op in ops["list"]:
        val = op.get("value", val)
        expect(c_name(prefix + op["name"]), val)
        val += 1
    if spec.get("max-by-define"):
        expect(c_name(prefix + "max"), val - 1)

    for e in errors:
        print("check_spec: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
