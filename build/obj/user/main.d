build/obj/user/main.o: user/main.c user/cli/commands.h user/core/log.h
user/cli/commands.h:
user/core/log.h:
