build/obj/user/output/json.o: user/output/json.c \
 user/output/writer_impl.h user/output/writer.h user/output/record.h
user/output/writer_impl.h:
user/output/writer.h:
user/output/record.h:
