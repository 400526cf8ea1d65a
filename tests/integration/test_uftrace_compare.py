"""tools/uftrace-compare: the rules it applies to cmon's trees so that
they read as uftrace shows its own (each found on one of uftrace's test
programs; see docs/cmon-output.md, "UFTRACE'S TEST PROGRAMS")."""
import importlib.machinery
import importlib.util
import json
import os
import shutil

import cmonlib

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                    "uftrace-compare")


def tool():
    loader = importlib.machinery.SourceFileLoader("uftrace_compare", TOOL)
    spec = importlib.util.spec_from_loader("uftrace_compare", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_uftrace_compare_names_as_uftrace_demangles():
    uc = tool()
    assert uc.strip_params("std::__cxx11::basic_ostringstream<char, std::char_traits<char>, "
                           "std::allocator<char> >::str() const") == \
        "std::__cxx11::basic_ostringstream::str"
    assert uc.strip_params("std_string_ret[abi:cxx11](int)") == "std_string_ret"
    assert uc.strip_params("foo_internal.2406") == "foo_internal"


def test_uftrace_compare_tail_call_keeps_the_next_call_it_does_not_reach():
    # t145_longjmp3: _setjmp tail-jumps to __sigsetjmp; the getpid after it
    # is main's own call
    uc = tool()
    forest = [("_setjmp\t", []), ("getpid", []), ("_setjmp\t", []), ("foo", [])]
    libs = {"_setjmp", "getpid"}
    assert uc.flatten(uc.nest_libcalls(forest, libs, {"_setjmp": {"__sigsetjmp"}})) == \
        ["_setjmp;", "getpid;", "_setjmp;", "foo;"]
    # a tail jump that reaches the next call: that call is its callee
    assert uc.flatten(uc.nest_libcalls([("puts\t", []), ("getpid", [])], {"puts", "getpid"},
                                       {"puts": {"getpid"}})) == ["puts;"]


def test_uftrace_compare_finds_tail_jump_targets_in_libc():
    if not shutil.which("objdump"):
        raise cmonlib.Skip("no objdump (binutils)")
    uc = tool()
    rec = {"func": "_setjmp", "status": "tailcall", "module": "libc.so.6"}
    got = uc.tail_targets(json.dumps(rec), "/bin/true", "/")
    assert got == {"_setjmp": {"__sigsetjmp"}}, got


def test_uftrace_compare_thread_exit_calls_by_design():
    # t118_thread_tsd: uftrace stops recording a thread at its own TSD
    # destructor; the thread's tsd_dtor and libc's frees come after
    uc = tool()
    want = ["thread {", "  malloc;", "  pthread_setspecific;", "}"]
    assert uc.thread_exit_only(want, want + ["tsd_dtor {", "  free;", "}", "free;"])
    assert not uc.thread_exit_only(want, want[:2] + ["  free;"] + want[2:])
    assert not uc.thread_exit_only(want, want)


def test_uftrace_compare_exec_from_thread_view():
    # t130_thread_exec: the new image nested in the old main, the main
    # thread's call pending at the exec (pthread_join) left out
    uc = tool()
    forest = [("main", [("pthread_create", []), ("pthread_join", [])]),
              ("main", [("a", [("getpid", [])])])]
    assert uc.flatten(uc.exec_view(forest, {"pthread_join", "main"})) == \
        ["main {", "  pthread_create;", "  main {", "    a {", "      getpid;", "    }",
         "  }", "}"]


def test_uftrace_compare_traced_library_as_uftrace_hooks_plt():
    # t251_exception4: main calls XXX::XXX of a traced library through its
    # PLT; uftrace shows the PLT call and the library's entry, not the
    # library's own library calls
    uc = tool()
    forest = [("main", [("XXX::XXX", [("__cxa_allocate_exception", []),
                                      ("std::runtime_error::runtime_error", [])]),
                        ("YYY::YYY", [("__cxa_allocate_exception", [])])])]
    libs = {"__cxa_allocate_exception", "std::runtime_error::runtime_error"}
    got = uc.traced_lib_view(forest, {"XXX::XXX"}, {"XXX::XXX"}, libs)
    assert uc.flatten(got) == ["main {", "  XXX::XXX {", "    XXX::XXX;", "  }",
                               "  YYY::YYY {", "    __cxa_allocate_exception;", "  }", "}"]


def test_uftrace_compare_hides_uftraces_exception_hooks():
    # t185_exception2: __cxa_end_catch's own __cxa_free_exception goes with it
    uc = tool()
    view = uc.View()
    forest = [("main", [("foo", [("__cxa_throw", [])]),
                        ("__cxa_end_catch", [("__cxa_free_exception", [])]), ("bar", [])])]
    assert uc.flatten(view.apply(forest, set())) == ["main {", "  foo;", "  bar;", "}"]
