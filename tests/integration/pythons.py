"""The CPythons the --py tests run on: Debian's /usr/bin/python3.11 (a
static build) and pyenv's 3.11.7, 3.12.1 and 3.13.0 (shared libpython),
each test once per interpreter (its name ends in the interpreter's tag);
an interpreter this machine lacks is skipped by name."""
import os
import subprocess

from cmonlib import Skip


def _pyenv_root():
    root = os.environ.get("PYENV_ROOT")
    if root:
        return root
    try:
        out = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return os.path.expanduser("~/.pyenv")


class Py:
    """One interpreter: PATH, its version, how cmon sees its calls."""

    # interp->eval_frame, PyFunctionObject.vectorcall, per minor version
    EVAL_FRAME = {11: 1424, 12: 1744, 13: 8472}

    def __init__(self, tag, path, what, version):
        self.tag, self.path, self.what, self.version = tag, path, what, version
        self.minor = version[1]
        self.comm = os.path.basename(path)[:15]
        # 3.12+: only the selected functions' calls are probed, through
        # the vectorcall entry; 3.11: every call, through the evaluator
        self.vectorcall = self.minor >= 12
        self.row = "_PyFunction_Vectorcall" if self.vectorcall else "_PyEval_EvalFrameDefault"

    def need(self):
        if not os.access(self.path, os.X_OK):
            raise Skip("%s is not installed (%s)" % (self.what, self.path))
        return self

    def __repr__(self):
        return self.tag


_ROOT = _pyenv_root()
DEBIAN = Py("deb311", "/usr/bin/python3.11", "Debian's python3.11 (tools/install-deps.sh test)",
            (3, 11))
PYTHONS = [DEBIAN] + [
    Py("py" + v.replace(".", ""), os.path.join(_ROOT, "versions", v, "bin", "python" + v[:4]),
       "pyenv's %s" % v, tuple(int(x) for x in v.split(".")))
    for v in ("3.11.7", "3.12.1", "3.13.0")
]

# pyenv's CPythons older than 3.11 (no Py_Version): refused, by version
OLDER = [
    Py("py" + v.replace(".", ""), os.path.join(_ROOT, "versions", v, "bin",
                                               "python" + ".".join(v.split(".")[:2])),
       "pyenv's %s" % v, tuple(int(x) for x in v.split(".")))
    for v in ("2.7.18", "3.6.15", "3.7.16", "3.8.18", "3.9.18", "3.10.13")
]


def matrix(ns, name, fn, pythons=None):
    """NAME_<tag> in namespace NS for each interpreter: FN(py)."""
    for py in pythons or PYTHONS:
        def test(py=py):
            fn(py.need())
        test.__name__ = "%s_%s" % (name, py.tag)
        test.__doc__ = fn.__doc__
        ns[test.__name__] = test
