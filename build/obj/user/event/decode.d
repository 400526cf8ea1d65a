build/obj/user/event/decode.o: user/event/decode.c user/event/decode.h \
 bpf/cmon.h user/output/record.h user/probe/resolve.h \
 user/elf/funcpattern.h user/elf/symtab.h user/elf/symtab.h \
 user/probe/insn.h
user/event/decode.h:
bpf/cmon.h:
user/output/record.h:
user/probe/resolve.h:
user/elf/funcpattern.h:
user/elf/symtab.h:
user/elf/symtab.h:
user/probe/insn.h:
