#!/usr/bin/env python3
"""The longest functions under src/, for the 'small pieces' rule (issue 12, item 8).

    scripts/longest-fns.py [N] [PATH...]     # default: 20 longest, src/

A function runs from its `fn` line to the line where its braces close. Strings, chars
and comments are skipped when counting braces; test modules are left out. Good enough
to rank functions, not a Rust parser.
"""
import os
import re
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+|async\s+|unsafe\s+|extern\s+\"C\"\s+)*fn\s+(\w+)")


def strip(line, state):
    """The line without strings, chars and comments; state carries block comments."""
    out, i = [], 0
    while i < len(line):
        if state["block"]:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out)
            state["block"], i = False, j + 2
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"], i = True, i + 2
            continue
        if c == '"':
            i += 1
            while i < len(line) and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        if c == "'" and re.match(r"'(\\.|[^\\'])'", line[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", line[i:]).group(0))
            continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    state = {"block": False}
    found, stack, depth = [], [], 0
    in_tests_at = None
    for n, raw in enumerate(lines, 1):
        if in_tests_at is None and re.match(r"^\s*#\[cfg\(test\)\]", raw):
            in_tests_at = depth
        code = strip(raw, state)
        m = FN.match(raw)
        if m and in_tests_at is None:
            stack.append((m.group(4), n, depth))
        for ch in code:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if stack and depth == stack[-1][2]:
                    name, start, _ = stack.pop()
                    found.append((n - start + 1, f"{path}:{start}", name))
        if stack and code.rstrip().endswith(";") and depth == stack[-1][2]:
            stack.pop()  # a declaration without a body (trait method)
    return found


def main():
    args = sys.argv[1:]
    count = int(args.pop(0)) if args and args[0].isdigit() else 20
    roots = args or ["src"]
    found = []
    for root in roots:
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith(".rs"):
                    found += functions(os.path.join(d, f))
    for length, where, name in sorted(found, reverse=True)[:count]:
        print(f"{length:5}  {name:32} {where}")


main()
