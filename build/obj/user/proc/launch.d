build/obj/user/proc/launch.o: user/proc/launch.c user/proc/launch.h
user/proc/launch.h:
