build/obj/user/proc/procmaps.o: user/proc/procmaps.c user/core/log.h \
 user/proc/procmaps.h
user/core/log.h:
user/proc/procmaps.h:
