"""The manual as a user meets it: `cmon help COMMAND`, the docs checked
against the option tables, `make install` (binaries, libcmon with its
pkg-config file, man pages, bash completion) into a DESTDIR, and the
installed pieces used as a user would."""
import os
import subprocess

from cmonlib import OUT, check, cmon, eq, run, stderr_lines, tmpfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPTDUMP = os.path.join(OUT, "tools", "optdump")


def _make(*targets, **env):
    e = dict(os.environ, **env)
    p = subprocess.run(["make", "--no-print-directory", "OUT=" + OUT] + list(targets),
                       cwd=ROOT, capture_output=True, text=True, env=e)
    return p.returncode, p.stdout, p.stderr


def _options(command):
    """The long options COMMAND takes, from the option table."""
    code, out, _ = run([OPTDUMP, "tsv"])
    eq(code, 0, "optdump tsv exit status")
    return sorted(l.split("\t")[1] for l in out.splitlines() if l.split("\t")[0] == command)


def test_help_command_is_the_commands_help():
    code, out, err = cmon(["help", "trace"])
    eq(code, 0, "cmon help trace exit status (%s)" % err)
    code2, out2, _ = cmon(["trace", "--help"])
    eq(code2, 0, "cmon trace --help exit status")
    eq(out, out2, "cmon help trace against cmon trace --help")
    check("--func" in out, "trace's help lists --func")
    code, out, err = cmon(["help", "tracee"])
    eq(code, 2, "cmon help tracee exit status")
    lines = stderr_lines(err)
    eq(len(lines), 1, "one error line: %r" % lines)
    check("no command 'tracee'" in lines[0], lines[0])


def test_every_command_documented():
    """optdump (the docs, the completion) knows every command `cmon help`
    lists, and each has its page in docs/."""
    code, out, _ = cmon(["help"])
    eq(code, 0, "cmon help exit status")
    listed = sorted(l.split()[0] for l in out.splitlines() if l.startswith("  "))
    code, dumped, _ = run([OPTDUMP, "commands"])
    eq(code, 0, "optdump commands exit status")
    eq(sorted(dumped.split()), listed, "optdump's commands against cmon help's")
    for c in listed:
        if c not in ("help", "version"):
            check(os.path.exists(os.path.join(ROOT, "docs", "cmon-%s.md" % c)),
                  "docs/cmon-%s.md exists" % c)


def test_docs_name_only_options_that_exist():
    code, out, err = _make("docs-check")
    eq(code, 0, "make docs-check on the tree: %s%s" % (out, err))
    # The check fails on a page naming an option no command takes (the
    # README once named `cmon profile --hist-arg`), and on a stale OPTIONS
    # section.
    page = tmpfile("page.md")
    with open(page, "w") as f:
        f.write("Histograms: `cmon profile --hist-arg 1 -p 42`.\n\n"
                "<!-- options: rm -->\n- **--bogus**: no\n<!-- end options -->\n")
    p = subprocess.run([os.path.join(ROOT, "tools", "docs-options.py"), "--optdump", OPTDUMP,
                        "--check", page], capture_output=True, text=True, cwd=ROOT)
    eq(p.returncode, 1, "docs-options on a bad page")
    check("cmon profile takes no --hist-arg" in p.stdout, p.stdout)
    check("OPTIONS section is not the option table's" in p.stdout, p.stdout)


def test_make_install_into_destdir():
    dest = tmpfile("destdir")
    code, out, err = _make("install", "DESTDIR=" + dest, "PREFIX=/usr")
    eq(code, 0, "make install: %s" % err[-2000:])
    usr = os.path.join(dest, "usr")
    for rel in ("bin/cmon", "bin/cmon-agent", "lib/libcmon.a", "include/cmon/cmon.h",
                "lib/pkgconfig/cmon.pc", "share/man/man1/cmon-trace.1",
                "share/man/man1/cmon-agent.1", "share/bash-completion/completions/cmon"):
        check(os.path.exists(os.path.join(usr, rel)), "installed %s" % rel)
    code, out, _ = run([os.path.join(usr, "bin", "cmon"), "--version"])
    eq(code, 0, "installed cmon --version")
    check(out.startswith("cmon "), out)

    # A man page lists the command's options as the table has them.
    page = open(os.path.join(usr, "share/man/man1/cmon-trace.1")).read()
    check(page.startswith(".nh\n.TH cmon-trace 1"), page[:40])
    for opt in _options("trace"):
        check("\\fB%s\\fP" % opt.replace("-", "\\-") in page or "\\fB%s\\fP" % opt in page,
              "cmon-trace.1 documents %s" % opt)

    # libcmon through pkg-config, as a user's build finds it.
    pc = dict(os.environ, PKG_CONFIG_PATH=os.path.join(usr, "lib", "pkgconfig"),
              PKG_CONFIG_SYSROOT_DIR=dest)
    p = subprocess.run(["pkg-config", "--cflags", "--libs", "cmon"], capture_output=True,
                       text=True, env=pc)
    eq(p.returncode, 0, "pkg-config cmon: %s" % p.stderr)
    flags = p.stdout.split()
    eq(flags, ["-I%s/usr/include" % dest, "-L%s/usr/lib" % dest, "-lcmon", "-lsqlite3",
               "-ljansson"], "pkg-config --cflags --libs cmon")
    exe = tmpfile("read_store")
    p = subprocess.run(["cc", os.path.join(ROOT, "examples", "read_store.c"), "-o", exe] + flags,
                       capture_output=True, text=True)
    eq(p.returncode, 0, "example built against the installed libcmon: %s" % p.stderr)
    code, out, err = run([os.path.join(OUT, "tests", "store_fill"), tmpfile("store")])
    eq(code, 0, "store_fill (%s)" % err)
    store = out.strip()
    mine = run([exe, store])
    built = run([os.path.join(OUT, "examples", "read_store"), store])
    eq(mine[0], 0, "installed-libcmon example exit status (%s)" % mine[2])
    eq(mine[1], built[1], "the example's output, installed against built libcmon")
    check(mine[1].strip() != "", "the example printed the store's calls")

    # Bash completion: options of the command being typed, from the table.
    comp = os.path.join(usr, "share/bash-completion/completions/cmon")
    def complete(*words):
        script = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _cmon; printf "%%s\\n" "${COMPREPLY[@]}"'
                  % (comp, " ".join("'%s'" % w for w in words), len(words) - 1))
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
        eq(p.returncode, 0, "completion of %r: %s" % (words, p.stderr))
        return sorted(w for w in p.stdout.split("\n") if w)
    eq(complete("cmon", "tra"), ["trace"], "command completion")
    eq(complete("cmon", "trace", "--fo"), [o for o in _options("trace") if o.startswith("--fo")],
       "trace's options starting --fo")
    eq(complete("cmon", "profile", "--hist"),
       [o for o in _options("profile") if o.startswith("--hist")], "profile's --hist options")
    eq(complete("cmon", "agent", "--sp"), ["--spec"], "the agent's options")
    eq(complete("cmon", "help", "exp"), ["export"], "help's command names")
