# The manual: docs/ pages, the man pages built from them, the bash
# completion, and `make install`.  Included by the main Makefile.
#
#   $(OUT)/tools/optdump        prints the option tables (tools/optdump.c)
#   $(OUT)/completion/cmon      bash completion, generated from the tables
#   $(OUT)/man/*.1, *.7         docs/cmon-*.md through go-md2man
#   make docs                   rewrites the OPTIONS sections of docs/ from
#                               the tables (commit the result)
#   make docs-check             fails when docs/ or the README name an option
#                               no command takes, or an OPTIONS section is
#                               not what the tables say (part of make test)
#   make install                PREFIX (/usr/local), DESTDIR: binaries,
#                               libcmon and its header, cmon.pc, man pages,
#                               completion

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
GO_MD2MAN ?= go-md2man

# Command pages are section 1 (cmon-trace.md -> cmon-trace.1), the others
# section 7 (cmon-output.md -> cmon-output.7).
MAN_SRCS := $(wildcard docs/cmon*.md)

DOC_COMMANDS := trace capture break list profile ls show export report rm stats diff host agent
MAN1 := $(patsubst docs/%.md,$(OUT)/man/%.1,$(filter docs/cmon.md $(addprefix docs/cmon-,$(addsuffix .md,$(DOC_COMMANDS))),$(MAN_SRCS)))
MAN7 := $(patsubst docs/%.md,$(OUT)/man/%.7,$(filter-out docs/cmon.md $(addprefix docs/cmon-,$(addsuffix .md,$(DOC_COMMANDS))),$(MAN_SRCS)))

.PHONY: man completion docs docs-check install uninstall

$(OUT)/tools/optdump: tools/optdump.c $(AGENT_LIB) $(CORE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CMON_CFLAGS) $< $(AGENT_LIB) $(CORE_LIB) $(AGENT_LDLIBS) -o $@

$(OUT)/completion/cmon: $(OUT)/tools/optdump
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$< bash > $@

completion: $(OUT)/completion/cmon

$(OUT)/.deps-man: tools/install-deps.sh
	$(Q)./tools/install-deps.sh man
	$(Q)mkdir -p $(@D) && touch $@

$(OUT)/man/%.1: docs/%.md | $(OUT)/.deps-man
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GO_MD2MAN) -in $< -out $@

$(OUT)/man/%.7: docs/%.md | $(OUT)/.deps-man
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GO_MD2MAN) -in $< -out $@

man: $(MAN1) $(MAN7)

docs: $(OUT)/tools/optdump
	$(Q)./tools/docs-options.py --optdump $< --write

docs-check: $(OUT)/tools/optdump
	$(Q)./tools/docs-options.py --optdump $< --check

install: all man completion
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR)/cmon $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(COMPLETIONDIR)
	install -m 755 $(OUT)/cmon $(OUT)/cmon-agent $(DESTDIR)$(BINDIR)/
	install -m 644 $(OUT)/libcmon.a $(DESTDIR)$(LIBDIR)/
	install -m 644 include/cmon/cmon.h $(DESTDIR)$(INCLUDEDIR)/cmon/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(CMON_VERSION_STRING)|' \
		docs/cmon.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/cmon.pc
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	$(if $(MAN7),install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7/)
	install -m 644 $(OUT)/completion/cmon $(DESTDIR)$(COMPLETIONDIR)/cmon

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cmon $(DESTDIR)$(BINDIR)/cmon-agent \
		$(DESTDIR)$(LIBDIR)/libcmon.a $(DESTDIR)$(LIBDIR)/pkgconfig/cmon.pc \
		$(DESTDIR)$(COMPLETIONDIR)/cmon \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(MAN7)))
	rm -rf $(DESTDIR)$(INCLUDEDIR)/cmon

CMON_VERSION_STRING := $(shell sed -n 's/^\#define CMON_VERSION "\(.*\)"/\1/p' user/core/exit.h)
