build/obj/user/elf/symtab.o: user/elf/symtab.c user/core/log.h \
 user/elf/symtab.h
user/core/log.h:
user/elf/symtab.h:
