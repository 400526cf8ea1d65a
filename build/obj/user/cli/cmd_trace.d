build/obj/user/cli/cmd_trace.o: user/cli/cmd_trace.c user/cli/commands.h \
 user/cli/options.h user/output/writer.h user/output/record.h \
 user/probe/resolve.h user/elf/funcpattern.h user/elf/symtab.h \
 user/elf/symtab.h user/probe/insn.h user/core/log.h \
 user/core/privilege.h user/event/decode.h bpf/cmon.h \
 user/output/record.h user/event/tracer.h user/proc/launch.h \
 user/proc/libpath.h user/proc/procmaps.h
user/cli/commands.h:
user/cli/options.h:
user/output/writer.h:
user/output/record.h:
user/probe/resolve.h:
user/elf/funcpattern.h:
user/elf/symtab.h:
user/elf/symtab.h:
user/probe/insn.h:
user/core/log.h:
user/core/privilege.h:
user/event/decode.h:
bpf/cmon.h:
user/output/record.h:
user/event/tracer.h:
user/proc/launch.h:
user/proc/libpath.h:
user/proc/procmaps.h:
