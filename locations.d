locations.o: user/dwarf/locations.c user/dwarf/debuginfo_impl.h \
 user/dwarf/debuginfo.h user/dwarf/ctype.h
user/dwarf/debuginfo_impl.h:
user/dwarf/debuginfo.h:
user/dwarf/ctype.h:
