build/obj/user/core/log.o: user/core/log.c user/core/log.h
user/core/log.h:
