build/obj/user/probe/attach.o: user/probe/attach.c user/probe/attach.h
user/probe/attach.h:
