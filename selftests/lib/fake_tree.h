/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake file tree for the tests that read /sys (libcoll's address
 * look-up, collctl doctor): write @text at @root/@rel, making the
 * directories on the way.
 */
#ifndef FAKE_TREE_H
#define FAKE_TREE_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static inline void fake_put(const char *root, const char *rel, const char *text)
{
	char path[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

#endif /* FAKE_TREE_H */
