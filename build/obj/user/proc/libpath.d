build/obj/user/proc/libpath.o: user/proc/libpath.c user/core/log.h \
 user/proc/libpath.h
user/core/log.h:
user/proc/libpath.h:
