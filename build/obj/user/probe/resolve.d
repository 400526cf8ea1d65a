build/obj/user/probe/resolve.o: user/probe/resolve.c user/core/log.h \
 user/proc/libpath.h user/proc/procmaps.h user/probe/resolve.h \
 user/elf/funcpattern.h user/elf/symtab.h user/elf/symtab.h \
 user/probe/insn.h
user/core/log.h:
user/proc/libpath.h:
user/proc/procmaps.h:
user/probe/resolve.h:
user/elf/funcpattern.h:
user/elf/symtab.h:
user/elf/symtab.h:
user/probe/insn.h:
