build/obj/user/cli/options.o: user/cli/options.c user/core/log.h \
 user/cli/options.h user/output/writer.h user/output/record.h \
 user/probe/resolve.h user/elf/funcpattern.h user/elf/symtab.h \
 user/elf/symtab.h user/probe/insn.h
user/core/log.h:
user/cli/options.h:
user/output/writer.h:
user/output/record.h:
user/probe/resolve.h:
user/elf/funcpattern.h:
user/elf/symtab.h:
user/elf/symtab.h:
user/probe/insn.h:
