#!/usr/bin/env python3
"""The documentation against the option tables (tools/optdump prints them).

--write: rewrite each docs/ page's OPTIONS section, between
    <!-- options: COMMAND -->  and  <!-- end options -->,
from the table (so `man cmon-trace` lists exactly what trace takes).
--check: fail, one line per finding, when
  - an OPTIONS section differs from what --write would make;
  - a `cmon COMMAND ...` command line in README.md or docs/ (in a code
    block or inline code) passes an option COMMAND does not take;
  - inline code that is a bare option (`--name` or `--name ARG`) names an
    option no cmon command takes.
"""
import argparse, glob, re, subprocess, sys

BEGIN = re.compile(r'<!-- options: (\S+) -->')
END = '<!-- end options -->'
GLOBAL = {'--help', '-h', '--version'}
# Options the pages name that are not cmon's: other programs' (LTTng's,
# CPython's configure), and ones a page says cmon does not offer.
NOT_CMON = {'--blocking-timeout', '--py-lines', '--enable-shared'}
# A line showing cmon's error for an option given to the wrong command.
ERROR_EXAMPLE = 'is not for this command'


def tables(optdump):
    out = subprocess.run([optdump, 'tsv'], check=True, capture_output=True, text=True).stdout
    opts = {}
    for line in out.splitlines():
        cmd, long, short, _arg = line.split('\t')
        opts.setdefault(cmd, set()).add(long)
        if short:
            opts[cmd].add(short)
    return opts


def options_section(optdump, cmd):
    return subprocess.run([optdump, 'md', cmd], check=True, capture_output=True, text=True).stdout


def rewrite(text, optdump):
    out, pos = [], 0
    for m in BEGIN.finditer(text):
        end = text.find(END, m.end())
        if end < 0:
            raise SystemExit(f'docs-options: {m.group(0)} without {END}')
        out.append(text[pos:m.end()] + '\n' + options_section(optdump, m.group(1)))
        pos = end
    out.append(text[pos:])
    return ''.join(out)


def command_lines(text):
    """Each `cmon ...` command line in code blocks and inline code."""
    in_block = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith('```'):
            in_block = not in_block
            continue
        spans = [line] if in_block else re.findall(r'`([^`]+)`', line)
        for span in spans:
            for m in re.finditer(r'(?:^|[\s|;&($])cmon(?:-agent)?\s+([a-z]+)\b([^|;&)]*)', span):
                yield n, m.group(1), m.group(2), span
        if not in_block:
            for span in re.findall(r'`(--[a-zA-Z][\w-]*)(?:[ =][^`]*)?`', line):
                yield n, None, span, span


def check(paths, opts, optdump):
    every = set().union(*opts.values()) | GLOBAL
    bad = 0
    for path in paths:
        text = open(path).read()
        lines = text.splitlines()
        if rewrite(text, optdump) != text:
            print(f'{path}: an OPTIONS section is not the option table\'s (make docs)')
            bad += 1
        for n, cmd, rest, span in command_lines(text):
            if cmd is None:
                if rest not in every and rest not in NOT_CMON:
                    print(f'{path}:{n}: `{rest}` is no option of any cmon command')
                    bad += 1
                continue
            if cmd not in opts or ERROR_EXAMPLE in lines[n - 1]:
                continue  # prose such as "cmon is ...", or an error shown
            rest = rest.split(' -- ')[0]
            for word in re.findall(r'(?:^|\s)(--?[a-zA-Z][\w-]*)', rest):
                if word not in opts[cmd] and word not in GLOBAL:
                    print(f'{path}:{n}: cmon {cmd} takes no {word}: {span.strip()}')
                    bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--optdump', required=True)
    ap.add_argument('--write', action='store_true')
    ap.add_argument('--check', action='store_true')
    ap.add_argument('paths', nargs='*')
    a = ap.parse_args()
    paths = a.paths or ['README.md'] + sorted(glob.glob('docs/*.md'))
    if a.write:
        for path in paths:
            text = open(path).read()
            new = rewrite(text, a.optdump)
            if new != text:
                open(path, 'w').write(new)
    if a.check:
        bad = check(paths, tables(a.optdump), a.optdump)
        if bad:
            print(f'docs-options: {bad} finding(s)', file=sys.stderr)
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
