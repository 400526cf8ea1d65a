build/obj/user/output/strbuf.o: user/output/strbuf.c \
 user/output/writer_impl.h user/output/writer.h user/output/record.h
user/output/writer_impl.h:
user/output/writer.h:
user/output/record.h:
