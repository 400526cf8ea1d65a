build/obj/user/core/privilege.o: user/core/privilege.c user/core/log.h \
 user/core/privilege.h
user/core/log.h:
user/core/privilege.h:
