build/obj/user/probe/insn.o: user/probe/insn.c user/core/log.h \
 user/probe/insn.h
user/core/log.h:
user/probe/insn.h:
