# SPDX-License-Identifier: GPL-2.0
#
# collctl (build/bin/collctl, man page tools/collctl/collctl.8): the
# module's generic netlink family through libnl-genl-3, sysfs, and
# `collctl calibrate`, which runs collectives through libcoll and fits the
# link model to them (calibrate.c, collctl_fit.c).  Its netlink,
# formatting, explain and fit parts (collctl_*.c but collctl_doctor.c and
# collctl_pairs.c) are also linked into selftests/lib/test_collctl,
# test_collctl_fit and selftests/kcoll/kcoll_auth.
#
# Debian packages: libjson-c-dev, libnl-genl-3-dev, librdmacm-dev,
# libibverbs-dev (in deps).

COLLCTL_PARTS := $(patsubst %.c,$(OBJDIR)/%.o,$(sort $(filter-out tools/collctl/collctl_doctor.c \
	tools/collctl/collctl_pairs.c,$(wildcard tools/collctl/collctl_*.c))))
# The words for a communicator's fault are libcoll's (lib/coll_fault.c):
# collctl show and a job's own error message say the same.
COLLCTL_PARTS += $(OBJDIR)/lib/coll_fault.o
# Sizes are read by the tools' one parser (tools/common/size.c).
COLLCTL_PARTS += $(TOOLS_COMMON_OBJS)
# collctl doctor calls into libcoll (the tests run it as a program): not a
# part; nor its pair checks (collctl_pairs.c), the one user of librdmacm.
COLLCTL_DOCTOR := $(OBJDIR)/tools/collctl/collctl_doctor.o $(OBJDIR)/tools/collctl/collctl_pairs.o
RDMACM_CFLAGS := $(shell pkg-config --cflags librdmacm libibverbs 2>/dev/null)
RDMACM_LIBS := $(or $(shell pkg-config --libs librdmacm libibverbs 2>/dev/null),-lrdmacm -libverbs)
COLLCTL := $(BUILD)/bin/collctl$(if $(filter 1,$(SAN)),-san)

$(OBJDIR)/tools/collctl/collctl.o: CFLAGS_US += -I$(TOP)/lib $(JSONC_CFLAGS)
$(OBJDIR)/tools/collctl/collctl.o $(COLLCTL_PARTS) $(COLLCTL_DOCTOR): \
	CFLAGS_US += -I$(TOP)/tools/collctl -I$(TOP)/lib $(JSONC_CFLAGS) $(LIBNL_CFLAGS) \
	$(TOOLS_COMMON_CFLAGS)
# collctl doctor asks libcoll (and its internal header: the address from a
# given sysfs root, the secret's checks) what a job would use.
$(COLLCTL_DOCTOR): CFLAGS_US += -I$(TOP)/lib $(RDMACM_CFLAGS)
# collctl calibrate runs collectives: libcoll's header too.
$(OBJDIR)/tools/collctl/calibrate.o: CFLAGS_US += -I$(TOP)/lib -I$(TOP)/tools/collctl $(JSONC_CFLAGS) \
	$(TOOLS_COMMON_CFLAGS)

# The tools link the static archive: they run from build/bin/ anywhere.
$(COLLCTL): $(OBJDIR)/tools/collctl/collctl.o $(OBJDIR)/tools/collctl/calibrate.o $(COLLCTL_DOCTOR) \
	$(COLLCTL_PARTS) $(TOOLS_VERSION_OBJ) $(COLL_A) \
	$(ALGO_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS) $(LIBNL_LIBS) $(RDMACM_LIBS) -pthread

TOOLS_BIN += $(COLLCTL)
TOOLS_MAN8 += tools/collctl/collctl.8
