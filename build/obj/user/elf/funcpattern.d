build/obj/user/elf/funcpattern.o: user/elf/funcpattern.c \
 user/elf/funcpattern.h user/elf/symtab.h
user/elf/funcpattern.h:
user/elf/symtab.h:
