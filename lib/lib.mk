# SPDX-License-Identifier: GPL-2.0
#
# libcoll (lib/: coll.h, libcoll.so.1.0.0 with the soname libcoll.so.1
# and only the functions of coll.h exported (lib/libcoll.map), libcoll.a,
# libcoll.pc, the man pages: coll.3 and lib/man/, a page per family of
# functions and a one-line .so page per other function, as rdma-core's).
#
#   make libcoll       build/lib/libcoll.so.1.0.0 (+ .so.1, .so links),
#                      libcoll.a, libcoll.pc
#   make install-lib   header, libraries, libcoll.pc and man pages into
#                      $(DESTDIR)$(PREFIX) (PREFIX=/usr/local, LIBDIR=PREFIX/lib;
#                      Debian: LIBDIR=/usr/lib/<multiarch triplet>)
#   make uninstall-lib removes exactly what install-lib installed
#
# Debian packages: libjson-c-dev, pkg-config (in deps).

# The file name is libcoll.so.$(COLL_VERSION) and its soname
# libcoll.so.$(COLL_SOVERSION): the major numbers agree, as ldconfig and
# Debian's library packages (libcoll1) expect.  An incompatible ABI change
# raises both; a new function raises the minor number and gets a new
# version node in lib/libcoll.map.
COLL_SOVERSION := 1
COLL_VERSION := $(COLL_SOVERSION).0.0
COLL_MAP := lib/libcoll.map
COLL_LIBDIR := $(BUILD)/lib$(if $(filter 1,$(SAN)),-san)
COLL_SRCS := $(sort $(wildcard lib/*.c))
COLL_OBJS := $(COLL_SRCS:%.c=$(OBJDIR)/%.o)
COLL_PIC_OBJS := $(COLL_SRCS:lib/%.c=$(OBJDIR)/lib/pic/%.o)
COLL_SO := $(COLL_LIBDIR)/libcoll.so.$(COLL_VERSION)
COLL_A := $(COLL_LIBDIR)/libcoll.a
COLL_PC := $(COLL_LIBDIR)/libcoll.pc
COLL_MAN := lib/coll.3 $(sort $(wildcard lib/man/*.3))

$(COLL_OBJS) $(COLL_PIC_OBJS): CFLAGS_US += -I$(TOP)/lib $(JSONC_CFLAGS)

$(OBJDIR)/lib/pic/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_US) -fPIC -fvisibility=default -c $< -o $@

$(COLL_A): $(COLL_OBJS)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

# LDFLAGS: the caller's (Debian's hardening flags when dpkg builds it).
$(COLL_SO): $(COLL_PIC_OBJS) $(COLL_MAP)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libcoll.so.$(COLL_SOVERSION) -Wl,--no-undefined \
		-Wl,--version-script=$(COLL_MAP) $(LDFLAGS) \
		-o $@ $(COLL_PIC_OBJS) $(SANFLAGS) $(JSONC_LIBS)
	ln -sf libcoll.so.$(COLL_VERSION) $(COLL_LIBDIR)/libcoll.so.$(COLL_SOVERSION)
	ln -sf libcoll.so.$(COLL_SOVERSION) $(COLL_LIBDIR)/libcoll.so

$(COLL_PC): lib/libcoll.pc.in Makefile lib/lib.mk
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(COLL_VERSION)|' $< >$@

.PHONY: libcoll install-lib uninstall-lib
libcoll: $(COLL_SO) $(COLL_A) $(COLL_PC)

install-lib: libcoll
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0644 lib/coll.h $(DESTDIR)$(INCLUDEDIR)/coll.h
	install -m 0755 $(COLL_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libcoll.so.$(COLL_VERSION) $(DESTDIR)$(LIBDIR)/libcoll.so.$(COLL_SOVERSION)
	ln -sf libcoll.so.$(COLL_SOVERSION) $(DESTDIR)$(LIBDIR)/libcoll.so
	install -m 0644 $(COLL_A) $(DESTDIR)$(LIBDIR)/
	@# written here, not copied: PREFIX/LIBDIR of this install, not of the build
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(COLL_VERSION)|' lib/libcoll.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/libcoll.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/libcoll.pc
	install -d $(DESTDIR)$(MANDIR)/man3
	install -m 0644 $(COLL_MAN) $(DESTDIR)$(MANDIR)/man3/

uninstall-lib:
	rm -f $(DESTDIR)$(INCLUDEDIR)/coll.h $(DESTDIR)$(PKGCONFIGDIR)/libcoll.pc \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(COLL_MAN))) $(DESTDIR)$(LIBDIR)/libcoll.a \
		$(addprefix $(DESTDIR)$(LIBDIR)/libcoll.so,.$(COLL_VERSION) .$(COLL_SOVERSION) '')
