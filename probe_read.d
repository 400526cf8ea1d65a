probe_read.o: user/agent/probe_read.c user/agent/probe_impl.h \
 user/agent/logsink.h user/output/record.h user/agent/probe.h \
 user/agent/metrics.h user/agent/series.h user/agg/profiler.h \
 user/agg/hist.h bpf/hist_buckets.h user/probe/resolve.h bpf/cmon_abi.h \
 user/elf/funcpattern.h user/elf/symtab.h user/elf/symtab.h \
 user/probe/insn.h user/agent/spec.h user/filter/expr.h \
 user/dwarf/debuginfo.h user/dwarf/ctype.h user/agg/hist_arg.h \
 user/core/log.h user/python/cpython.h user/python/pyprof.h \
 user/event/decode.h user/probe/calib.h bpf/calib_slots.h \
 user/event/tracer.h user/probe/setunion.h user/core/clock.h
user/agent/probe_impl.h:
user/agent/logsink.h:
user/output/record.h:
user/agent/probe.h:
user/agent/metrics.h:
user/agent/series.h:
user/agg/profiler.h:
user/agg/hist.h:
bpf/hist_buckets.h:
user/probe/resolve.h:
bpf/cmon_abi.h:
user/elf/funcpattern.h:
user/elf/symtab.h:
user/elf/symtab.h:
user/probe/insn.h:
user/agent/spec.h:
user/filter/expr.h:
user/dwarf/debuginfo.h:
user/dwarf/ctype.h:
user/agg/hist_arg.h:
user/core/log.h:
user/python/cpython.h:
user/python/pyprof.h:
user/event/decode.h:
user/probe/calib.h:
bpf/calib_slots.h:
user/event/tracer.h:
user/probe/setunion.h:
user/core/clock.h:
