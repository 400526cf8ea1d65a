build/obj/user/output/writer.o: user/output/writer.c user/core/log.h \
 user/output/writer_impl.h user/output/writer.h user/output/record.h
user/core/log.h:
user/output/writer_impl.h:
user/output/writer.h:
user/output/record.h:
