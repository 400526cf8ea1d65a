build/obj/user/event/tracer.o: user/event/tracer.c user/core/log.h \
 user/probe/attach.h user/probe/links.h user/probe/resolve.h \
 user/elf/funcpattern.h user/elf/symtab.h user/elf/symtab.h \
 user/probe/insn.h user/event/tracer.h bpf/cmon.h build/skel/trace.skel.h
user/core/log.h:
user/probe/attach.h:
user/probe/links.h:
user/probe/resolve.h:
user/elf/funcpattern.h:
user/elf/symtab.h:
user/elf/symtab.h:
user/probe/insn.h:
user/event/tracer.h:
bpf/cmon.h:
build/skel/trace.skel.h:
