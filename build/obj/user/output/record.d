build/obj/user/output/record.o: user/output/record.c user/output/record.h
user/output/record.h:
