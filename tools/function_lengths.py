#!/usr/bin/env python3
"""Lists the C++ functions longer than --max lines in the given files and folders.

A function's length is counted as lizard counts it: from the line of its name to the line
of its closing brace, both included. The scan matches braces on the source with comments,
string and character literals blanked out, and reads every branch of an #if / #ifdef /
#ifndef, each from the state the #if found. A brace opened at namespace
or class scope begins a function when the text before it since the last ';', '{' or '}' is a
name followed by a parenthesized parameter list and then only qualifiers (const, noexcept,
override, a trailing return type) or a constructor's initializer list. Brace pairs inside a
function (blocks, lambdas, initializers) belong to it. That suffices for this code base's
style (clang-format, Google based); it is not a C++ parser.

Exit status: 0 when no function is over the limit, 1 when one is, 2 on a usage error.
Standard library only (no third-party packages).
"""

import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".cu", ".cuh")

# words after which a parenthesized group is not a parameter list
NOT_A_NAME = {
    "if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "alignas", "decltype",
    "noexcept", "throw", "static_assert", "__attribute__", "__declspec", "new", "delete",
    "void", "int", "double", "float", "char", "bool", "long", "short", "unsigned", "signed", "auto",
}
# what may follow a parameter list before the body
QUALIFIERS = {"const", "noexcept", "override", "final", "mutable", "volatile", "&", "&&", "throw",
              "__attribute__", "try"}
SCOPE_KEYWORDS = {"namespace", "class", "struct", "union", "enum", "extern"}
ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")


def blank_literals(text):
    """text with comments, string and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)

    def blank(s):
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith('R"', i) and re.search(r'(?:^|[^A-Za-z0-9_]|(?<![A-Za-z0-9_])(?:u8|u|U|L))$', text[max(0, i - 3):i]):
            m = re.match(r'R"([^ ()\\\t\n]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(blank(text[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + blank(text[i + 1:j - 1]) + c if j - i >= 2 else blank(text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def mark_conditionals(text):
    """text with every preprocessor line blanked but for the conditionals, which become the
    single words #if (also #ifdef, #ifndef), #else (also #elif) and #endif."""
    out = []
    continued = False
    for line in text.split("\n"):
        if continued:
            continued = line.endswith("\\")
            out.append("")
            continue
        stripped = line.lstrip()
        if stripped.startswith("#"):
            word = re.match(r"#\s*(\w*)", stripped).group(1)
            continued = line.endswith("\\")
            kind = {"if": "#if", "ifdef": "#if", "ifndef": "#if", "else": "#else", "elif": "#else",
                    "endif": "#endif"}.get(word, "")
            out.append(kind)
        else:
            out.append(line)
    return "\n".join(out)


TOKEN = re.compile(r"\s+|#\w+|[A-Za-z_~][A-Za-z_0-9]*|::|->|&&|\d[\w.']*|\S")


def tokens(text):
    """(token, line) pairs of text, whitespace dropped; line numbers from 1."""
    line = 1
    out = []
    for m in TOKEN.finditer(text):
        t = m.group(0)
        if t[0].isspace():
            line += t.count("\n")
        else:
            out.append((t, line))
    return out


def is_word(t):
    return t[0].isalpha() or t[0] in "_~"


def analyse_header(head):
    """For the tokens before a '{' at namespace or class scope: ('function', name, line),
    ('init', ...) while inside a constructor's initializer list that brace-initializes a member,
    ('scope', ...) for a namespace, class or the like, ('other', ...) otherwise."""
    toks = list(head)
    # access specifiers and template heads in front
    while True:
        if len(toks) >= 2 and toks[0][0] in ("public", "private", "protected") and toks[1][0] == ":":
            toks = toks[2:]
            continue
        if toks and toks[0][0] == "template" and len(toks) > 1 and toks[1][0] == "<":
            depth, k = 0, 1
            while k < len(toks):
                depth += {"<": 1, ">": -1}.get(toks[k][0], 0)
                if toks[k][0] == ">" and depth == 0:
                    break
                k += 1
            toks = toks[k + 1:]
            continue
        break
    # operator names as one word: operator(), operator=, operator==, operator[] ...
    merged = []
    k = 0
    while k < len(toks):
        t, ln = toks[k]
        if t == "operator" and k + 1 < len(toks):
            j = k + 1
            if toks[j][0] == "(" and j + 1 < len(toks) and toks[j + 1][0] == ")":
                j += 2
            elif toks[j][0] == "[" and j + 1 < len(toks) and toks[j + 1][0] == "]":
                j += 2
            else:
                while j < len(toks) and toks[j][0] != "(":
                    j += 1
            merged.append(("operator" + "".join(x[0] for x in toks[k + 1:j]), ln))
            k = j
            continue
        merged.append((t, ln))
        k += 1
    toks = merged
    # top-level items: words and punctuation, with (...) and [...] groups collapsed
    items = []  # (kind, text, line) kind: 'w' word, 'p' punctuation, '(' group, '[' group
    depth = 0
    for t, ln in toks:
        if depth == 0:
            if t in ("(", "["):
                items.append((t, t, ln))
                depth = 1
            elif is_word(t):
                items.append(("w", t, ln))
            else:
                items.append(("p", t, ln))
        else:
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
    for g, item in enumerate(items):
        if item[0] != "(" or g == 0:
            continue
        before = items[g - 1]
        if before[0] == "p" and before[1] == ">":
            # a template's explicit arguments (an explicit specialization): the name before the <
            depth, b = 0, g - 1
            while b >= 0:
                depth += {">": 1, "<": -1}.get(items[b][1], 0) if items[b][0] == "p" else 0
                if depth == 0:
                    break
                b -= 1
            if b > 0:
                before = items[b - 1]
        if before[0] != "w" or before[1] in NOT_A_NAME:
            continue
        if any(x[0] == "p" and x[1] == "=" for x in items[:g]):
            return ("other", None, None)
        rest = items[g + 1:]
        k = 0
        ok = True
        while k < len(rest):
            kind, text, _ = rest[k]
            if kind == "p" and text == "->":
                break  # a trailing return type: whatever follows
            if kind == "p" and text == ":":
                # a constructor's initializer list: a brace now opens a member's initializer
                # when it follows a member's name (or a template's >), else the body
                last = head[-1][0] if head else ""
                init = is_word(last) or last == ">"
                return ("init" if init else "function", before[1], before[2])
            if (kind == "w" and text in QUALIFIERS) or kind == "(" or (kind == "p" and text in ("&", "&&")):
                k += 1
                continue
            ok = False
            break
        if ok:
            return ("function", before[1], before[2])
    # a namespace, class, struct, union, enum or extern block (after whatever macros stand
    # before it), unless it is an object initialized with braces
    keys = [g for g, x in enumerate(items) if x[0] == "w" and x[1] in SCOPE_KEYWORDS]
    if keys and not any(x[0] == "p" and x[1] == "=" for x in items[keys[-1]:]):
        return ("scope", None, None)
    return ("other", None, None)


class Conditionals:
    """Both branches of an #if are read, as lizard reads them, each from the state the #if
    found (the open braces in a body; the pending text at namespace or class scope); after
    #endif the state is the first branch's end, so braces that differ between the branches do
    not unbalance the rest."""

    def __init__(self):
        self.stack = []  # per open #if: [state at the #if, state at the end of its first branch]

    def on(self, word, state):
        """the state to go on with after directive word, given the current one"""
        if word == "#if":
            self.stack.append([state, None])
        elif word == "#else" and self.stack:
            top = self.stack[-1]
            if top[1] is None:
                top[1] = state
            return top[0]
        elif word == "#endif" and self.stack:
            _, first = self.stack.pop()
            if first is not None:
                return first
        return state


def matching_brace(toks, k):
    """the index of the '}' that closes the '{' at toks[k] (the last token if none does)"""
    depth = 0
    cond = Conditionals()
    j = k
    while j < len(toks):
        t = toks[j][0]
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return j
        elif t.startswith("#"):
            depth = cond.on(t, depth)
        j += 1
    return len(toks) - 1


def functions(text):
    """(name, first line, last line) of each function defined at namespace or class scope."""
    toks = tokens(mark_conditionals(blank_literals(text)))
    found = []
    head = []   # tokens since the last ';', '{' or '}' at the current scope
    paren = 0   # parentheses and brackets open in head
    cond = Conditionals()
    k = 0
    while k < len(toks):
        t, ln = toks[k]
        if t.startswith("#"):
            head, paren = cond.on(t, (list(head), paren))
        elif t in ("(", "["):
            paren += 1
            head.append((t, ln))
        elif t in (")", "]"):
            paren = max(paren - 1, 0)
            head.append((t, ln))
        elif t in ("{", "}") and paren > 0:
            head.append((t, ln))  # a brace inside a default argument or the like
        elif t == "{":
            kind, name, first = analyse_header(head)
            if kind == "scope":
                head = []
            else:
                # to the matching brace: a function body, an initializer, a member's
                # brace-initializer in a constructor's list
                j = matching_brace(toks, k)
                last = toks[j][1]
                if kind == "function":
                    found.append((name, first, last))
                    head = []
                elif kind == "init":
                    head.append(("{", ln))
                    head.append(("}", last))
                else:
                    head = []
                k = j
        elif t == "}":
            head = []
        elif t == ";" and paren == 0:
            head = []
        else:
            head.append((t, ln))
        k += 1
    return found


def source_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(SOURCE_SUFFIXES):
                        yield os.path.join(root, f)
        else:
            yield p


def main(argv):
    ap = argparse.ArgumentParser(description="C++ functions longer than --max lines (name line to closing brace).")
    ap.add_argument("paths", nargs="+", help="files or folders (folders: their C++ and CUDA sources, recursively)")
    ap.add_argument("--max", type=int, default=150, help="the most lines a function may have (default 150)")
    ap.add_argument("--all", action="store_true", help="list every function with its length, not only those over")
    args = ap.parse_args(argv)
    over = 0
    for path in source_files(args.paths):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            print(f"function_lengths: cannot read {path}: {e}", file=sys.stderr)
            return 2
        for name, first, last in functions(text):
            length = last - first + 1
            if length > args.max:
                over += 1
            if args.all or length > args.max:
                print(f"{path}:{first}: {name} has {length} lines" + (f" (more than {args.max})" if length > args.max else ""))
    if over:
        print(f"function_lengths: {over} function(s) longer than {args.max} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
