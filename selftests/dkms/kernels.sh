# SPDX-License-Identifier: GPL-2.0
#
# kernels.sh: sourced by selftests/dkms/dkms_check.sh and
# selftests/deb/check_deb.sh, which install kcoll through dkms for the
# same kernels: kc_dkms_kernels prints, one a line, every release of the
# 6.1 and 6.12 series whose headers are installed (what dkms can build
# for here).

kc_dkms_kernels() {
	local b rel

	for b in /lib/modules/*/build; do
		rel=$(basename "$(dirname "$b")")
		case "$rel" in 6.1.*|6.12.*) [ -e "$b/Makefile" ] && echo "$rel";; esac
	done
	return 0
}
