debuginfo.o: user/dwarf/debuginfo.c user/core/log.h \
 user/dwarf/debuginfo_impl.h user/dwarf/debuginfo.h user/dwarf/ctype.h
user/core/log.h:
user/dwarf/debuginfo_impl.h:
user/dwarf/debuginfo.h:
user/dwarf/ctype.h:
