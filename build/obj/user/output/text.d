build/obj/user/output/text.o: user/output/text.c \
 user/output/writer_impl.h user/output/writer.h user/output/record.h
user/output/writer_impl.h:
user/output/writer.h:
user/output/record.h:
