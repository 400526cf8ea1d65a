build/obj/user/output/csv.o: user/output/csv.c user/output/writer_impl.h \
 user/output/writer.h user/output/record.h
user/output/writer_impl.h:
user/output/writer.h:
user/output/record.h:
