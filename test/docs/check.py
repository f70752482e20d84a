#!/usr/bin/env python3
"""The docs check (CI): the documentation says what the binary does, and its links lead somewhere.

  python3 test/docs/check.py --binary build/kdesched

1. Every relative link in the project's Markdown (README.md, docs/, the READMEs of test/, bench/,
   scripts/ and helm/, bench/results/) names a file or folder that exists, and an anchor
   (`page.md#section`, `#section`) names a heading of that page, as GitHub makes anchors from
   headings (lower case, punctuation dropped, spaces to hyphens, `-1`, `-2`... for repeats).
2. Every flag `kdesched --help`, `kdesched plan --help` and `kdesched version --help` print
   appears in docs/flags.md, written as code (`--flag`).
3. Every metric the binary exports (`kdesched version --metrics`: every registered family, with or
   without series) appears in docs/metrics.md, written as code.
4. README.md stays a front page: at most 250 lines.

Prints one line per problem and exits 1 when there is one; 0 and a summary line otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
import unicodedata

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SKIP_DIRS = {".git", "build", "build-asan", "build-fuzz", "build-bench", "node_modules", ".cache"}
README_MAX_LINES = 250

LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def markdown_files():
    for base, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(base, f)


def outside_fences(text):
    """The lines of a Markdown text that are not inside a fenced code block, with their numbers."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def github_slug(heading):
    text = re.sub(r"`([^`]*)`", r"\1", heading)  # code spans keep their text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their label
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML goes
    text = text.strip().lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_ " or cat[0] in "LN" or cat == "Mn":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


_anchor_cache = {}


def anchors_of(path):
    if path not in _anchor_cache:
        seen = {}
        found = set()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line in outside_fences(text):
            m = HEADING.match(line)
            if m:
                slug = github_slug(m.group(2))
                n = seen.get(slug, 0)
                seen[slug] = n + 1
                found.add(slug if n == 0 else f"{slug}-{n}")
            for a in HTML_ANCHOR.findall(line):
                found.add(a)
        _anchor_cache[path] = found
    return _anchor_cache[path]


def strip_code_spans(line):
    return re.sub(r"`[^`]*`", "", line)


def check_links(problems):
    checked = 0
    for md in markdown_files():
        rel_md = os.path.relpath(md, ROOT)
        with open(md, encoding="utf-8") as f:
            text = f.read()
        for n, line in outside_fences(text):
            for target in LINK.findall(strip_code_spans(line)):
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                checked += 1
                path_part, _, anchor = target.partition("#")
                if path_part:
                    if path_part.startswith("/"):
                        problems.append(f"{rel_md}:{n}: link {target}: an absolute path (use a relative one)")
                        continue
                    dest = os.path.normpath(os.path.join(os.path.dirname(md), path_part))
                    if not dest.startswith(ROOT + os.sep) and dest != ROOT:
                        problems.append(f"{rel_md}:{n}: link {target}: leaves the repository")
                        continue
                    if not os.path.exists(dest):
                        problems.append(f"{rel_md}:{n}: link {target}: {os.path.relpath(dest, ROOT)} does not exist")
                        continue
                else:
                    dest = md
                if anchor:
                    if os.path.isdir(dest) or not dest.endswith(".md"):
                        problems.append(f"{rel_md}:{n}: link {target}: an anchor into something that is not a page")
                    elif anchor not in anchors_of(dest):
                        problems.append(f"{rel_md}:{n}: link {target}: no heading #{anchor} in "
                                        f"{os.path.relpath(dest, ROOT)}")
    return checked


def run(binary, *args):
    out = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise SystemExit(f"docs check: {binary} {' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def flags_of(help_text):
    """The flags a CLI11 help text lists: every --long name of an option line ("  -o,--output TEXT")."""
    flags = set()
    for line in help_text.split("\n"):
        m = re.match(r"^\s{2}(-[^\s]+)", line)
        if not m:
            continue
        for name in m.group(1).split(","):
            if name.startswith("--"):
                flags.add(name)
    return flags


def code_spans(text):
    spans = set()
    for _, line in outside_fences(text):
        spans.update(re.findall(r"`([^`]+)`", line))
    return spans


def check_flags(binary, problems):
    with open(os.path.join(ROOT, "docs", "flags.md"), encoding="utf-8") as f:
        documented = code_spans(f.read())
    flags = set()
    for cmd in ([], ["plan"], ["version"]):
        flags |= flags_of(run(binary, *cmd, "--help"))
    for flag in sorted(flags):
        if flag not in documented:
            problems.append(f"docs/flags.md: `{flag}` (from kdesched --help) is not documented")
    return len(flags)


def check_metrics(binary, problems):
    with open(os.path.join(ROOT, "docs", "metrics.md"), encoding="utf-8") as f:
        documented = code_spans(f.read())
    names = set()
    for line in run(binary, "version", "--metrics").split("\n"):
        m = re.match(r"^# TYPE (\S+) ", line)
        if m:
            names.add(m.group(1))
    if not names:
        problems.append("kdesched version --metrics listed no metric")
    for name in sorted(names):
        if name not in documented:
            problems.append(f"docs/metrics.md: `{name}` (exported by kdesched) is not documented")
    return len(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "kdesched"))
    ap.add_argument("--links-only", action="store_true", help="skip the checks that run the binary")
    a = ap.parse_args()
    problems = []
    links = check_links(problems)
    flags = metrics = 0
    if not a.links_only:
        flags = check_flags(a.binary, problems)
        metrics = check_metrics(a.binary, problems)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme_lines = f.read().count("\n")
    if readme_lines > README_MAX_LINES:
        problems.append(f"README.md: {readme_lines} lines; the front page stays within {README_MAX_LINES} "
                        "(move the detail into docs/)")
    for p in problems:
        print(p)
    print(f"docs: {links} links, {flags} flags, {metrics} metrics checked; README {readme_lines} lines; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
