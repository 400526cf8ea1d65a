build/obj/user/cli/cmd_list.o: user/cli/cmd_list.c user/cli/commands.h \
 user/cli/options.h user/output/writer.h user/output/record.h \
 user/probe/resolve.h user/elf/funcpattern.h user/elf/symtab.h \
 user/elf/symtab.h user/probe/insn.h user/core/log.h user/proc/libpath.h
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
user/proc/libpath.h:
