// SPDX-License-Identifier: GPL-2.0
/*
 * collctl config --persist, --unpersist, --show-persistent: tunables kept
 * as `options kcoll NAME=VALUE` in /etc/modprobe.d/kcoll.conf, which
 * modprobe applies at every load of the module, boot included.  collctl
 * doctor reads the same pairs through cc_persist_each().
 *
 * The file may hold more than collctl's line (comments, other modules'
 * options, an administrator's own lines): collctl owns the first `options
 * kcoll` line alone and keeps every other line as it was.  It writes the
 * whole file anew beside the old one and renames it over, so modprobe never
 * reads half a file, under a lock on the directory, so that ranks of one
 * node persisting at once (collctl calibrate --write --persist) do not
 * lose each other's values.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "collctl_fmt.h"
#include "collctl_persist.h"

#define HEADER "# Managed by collctl config --persist (man 8 collctl): it rewrites " \
	"the first \"options kcoll\" line; other lines are kept."
#define MAX_LINES 1024
#define MAX_PAIRS 64

/* The file in memory: its lines, and the pairs of collctl's line. */
struct pfile {
	const char *path;
	char *lines[MAX_LINES];
	size_t nlines;
	long own;			/* index of collctl's line, -1: none yet */
	char *names[MAX_PAIRS], *vals[MAX_PAIRS];	/* vals[i] NULL: a bare NAME */
	size_t npairs;
};

static const char *persist_path(void)
{
	const char *p = getenv(CC_PERSIST_ENV);

	return p && *p ? p : CC_PERSIST_PATH;
}

static void pfile_free(struct pfile *f)
{
	size_t i;

	for (i = 0; i < f->nlines; i++)
		free(f->lines[i]);
	for (i = 0; i < f->npairs; i++) {
		free(f->names[i]);
		free(f->vals[i]);
	}
}

/* Next word of @s at *@pos: a run of non-blanks, "double quotes" kept together. */
static char *next_word(const char *s, size_t *pos)
{
	size_t i = *pos, len = 0;
	char *w;
	bool q = false;

	while (s[i] == ' ' || s[i] == '\t')
		i++;
	if (!s[i])
		return NULL;
	w = malloc(strlen(s + i) + 1);
	if (!w)
		return NULL;
	for (; s[i] && (q || (s[i] != ' ' && s[i] != '\t')); i++) {
		if (s[i] == '"')
			q = !q;
		else
			w[len++] = s[i];
	}
	w[len] = 0;
	*pos = i;
	return w;
}

/* 1 if @line is `options kcoll ...` (its pairs then in @f), 0 if not, -errno. */
static int parse_options(struct pfile *f, const char *line)
{
	size_t pos = 0;
	char *w = next_word(line, &pos), *eq;
	int mine = w && !strcmp(w, "options");

	free(w);
	if (mine) {
		w = next_word(line, &pos);
		mine = w && !strcmp(w, "kcoll");
		free(w);
	}
	if (!mine)
		return 0;
	while ((w = next_word(line, &pos))) {
		if (f->npairs == MAX_PAIRS) {
			free(w);
			return -E2BIG;
		}
		eq = strchr(w, '=');
		f->names[f->npairs] = w;
		f->vals[f->npairs] = eq ? strdup(eq + 1) : NULL;
		if (eq)
			*eq = 0;
		f->npairs++;
	}
	return 1;
}

static int pfile_load(const char *prog, struct pfile *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *in;
	int ret = 0;

	f->path = persist_path();
	f->own = -1;
	in = fopen(f->path, "r");
	if (!in) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "%s: cannot read %s: %s\n", prog, f->path, strerror(errno));
		return -errno;
	}
	while (!ret && (n = getline(&line, &cap, in)) >= 0) {
		if (n && line[n - 1] == '\n')
			line[n - 1] = 0;
		if (f->nlines == MAX_LINES) {
			ret = -E2BIG;
			break;
		}
		if (f->own < 0) {
			ret = parse_options(f, line);
			if (ret == 1)
				f->own = (long)f->nlines;
			ret = ret < 0 ? ret : 0;
		}
		f->lines[f->nlines] = strdup(line);
		if (!f->lines[f->nlines++])
			ret = -ENOMEM;
	}
	free(line);
	fclose(in);
	if (ret)
		fprintf(stderr, "%s: cannot read %s: %s\n", prog, f->path,
			ret == -E2BIG ? "more lines or options than collctl handles" : strerror(-ret));
	return ret;
}

/* collctl's line for the pairs, quoting values with blanks as modprobe reads them. */
static void put_options(FILE *out, const struct pfile *f)
{
	size_t i;

	fputs("options kcoll", out);
	for (i = 0; i < f->npairs; i++) {
		if (!f->vals[i])
			fprintf(out, " %s", f->names[i]);
		else if (!*f->vals[i] || strpbrk(f->vals[i], " \t"))
			fprintf(out, " %s=\"%s\"", f->names[i], f->vals[i]);
		else
			fprintf(out, " %s=%s", f->names[i], f->vals[i]);
	}
	fputc('\n', out);
}

static int pfile_write(FILE *out, const struct pfile *f)
{
	bool header = false;
	size_t i;

	for (i = 0; i < f->nlines; i++)
		header |= !strcmp(f->lines[i], HEADER);
	if (!header)
		fprintf(out, "%s\n", HEADER);
	for (i = 0; i < f->nlines; i++) {
		if ((long)i != f->own)
			fprintf(out, "%s\n", f->lines[i]);
		else if (f->npairs)
			put_options(out, f);
	}
	if (f->own < 0 && f->npairs)
		put_options(out, f);
	return fflush(out) || ferror(out) || fsync(fileno(out)) ? -errno : 0;
}

/* The new file beside the old, renamed over it: modprobe sees one or the other. */
static int pfile_save(const char *prog, const struct pfile *f)
{
	char tmp[4096];
	FILE *out;
	int fd, ret;

	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", f->path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, tmp, strerror(errno));
		return ret;
	}
	out = fdopen(fd, "w");
	if (!out) {
		ret = -errno;
		close(fd);
	} else {
		ret = fchmod(fd, 0644) ? -errno : pfile_write(out, f);
		if (fclose(out) && !ret)
			ret = -errno;
	}
	if (!ret && rename(tmp, f->path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, f->path, strerror(-ret));
	}
	return ret;
}

/* Hold the directory's lock (released when the returned descriptor closes). */
static int lock_dir(const char *prog, const char *path)
{
	char *copy = strdup(path);
	int fd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd < 0 || flock(fd, LOCK_EX)) {
		fprintf(stderr, "%s: cannot lock the directory of %s: %s\n", prog, path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	free(copy);
	return fd;
}

static long find_pair(const struct pfile *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->npairs; i++)
		if (!strcmp(f->names[i], name))
			return (long)i;
	return -1;
}

/* A value modprobe.d can hold: one line, no double quote. */
static int check_value(const char *prog, const char *name, const char *value)
{
	if (!strpbrk(value, "\"\n"))
		return 0;
	fprintf(stderr, "%s: config --persist %s: the value '%s' has a double quote or a "
		"newline, which a modprobe.d line cannot hold\n", prog, name, value);
	return -EINVAL;
}

int cc_persist_put(const char *prog, const char *name, const char *value)
{
	struct pfile f = { 0 };
	int lock, ret;
	long i;
	char *v;

	if (check_value(prog, name, value))
		return -EINVAL;
	lock = lock_dir(prog, persist_path());
	if (lock < 0)
		return -EIO;
	ret = pfile_load(prog, &f);
	if (!ret) {
		i = find_pair(&f, name);
		v = strdup(value);
		if (!v || (i < 0 && f.npairs == MAX_PAIRS)) {
			free(v);
			ret = v ? -E2BIG : -ENOMEM;
			fprintf(stderr, "%s: cannot record %s in %s: %s\n", prog, name, f.path,
				strerror(-ret));
		} else if (i >= 0) {
			free(f.vals[i]);
			f.vals[i] = v;
		} else {
			f.names[f.npairs] = strdup(name);
			f.vals[f.npairs++] = v;
		}
	}
	if (!ret)
		ret = pfile_save(prog, &f);
	pfile_free(&f);
	close(lock);
	return ret;
}

static int persist_remove(const char *prog, const char *name)
{
	struct pfile f = { 0 };
	int lock, ret;
	long i = -1;

	lock = lock_dir(prog, persist_path());
	if (lock < 0)
		return 1;
	ret = pfile_load(prog, &f);
	if (!ret) {
		i = find_pair(&f, name);
		if (i < 0)
			fprintf(stderr, "%s: config --unpersist %s: %s holds no %s\n", prog, name,
				f.path, name);
	}
	if (i >= 0) {
		free(f.names[i]);
		free(f.vals[i]);
		memmove(&f.names[i], &f.names[i + 1], (f.npairs - i - 1) * sizeof(f.names[0]));
		memmove(&f.vals[i], &f.vals[i + 1], (f.npairs - i - 1) * sizeof(f.vals[0]));
		f.npairs--;
		ret = pfile_save(prog, &f);
	}
	pfile_free(&f);
	close(lock);
	return ret || i < 0 ? 1 : 0;
}

int cc_persist_each(const char *prog, const char **path, cc_persist_fn fn, void *ctx)
{
	struct pfile f = { 0 };
	size_t i;
	int ret = pfile_load(prog, &f);

	*path = f.path;
	for (i = 0; !ret && i < f.npairs; i++)
		fn(ctx, f.names[i], f.vals[i]);
	pfile_free(&f);
	return ret;
}

static int persist_show(const char *prog, bool json)
{
	struct pfile f = { 0 };
	json_object *o, *s;
	size_t i;

	if (pfile_load(prog, &f))
		return 1;
	if (json) {
		o = json_object_new_object();
		s = json_object_new_object();
		json_object_object_add(o, "path", json_object_new_string(f.path));
		for (i = 0; i < f.npairs; i++)
			json_object_object_add(s, f.names[i], f.vals[i] ?
					       json_object_new_string(f.vals[i]) : NULL);
		json_object_object_add(o, "settings", s);
		printf("%s\n", json_object_to_json_string_ext(o, cc_json_flags));
		json_object_put(o);
	} else {
		printf("%s%s\n", f.path, f.npairs ? "" : ": nothing persisted");
		for (i = 0; i < f.npairs; i++)
			printf("%-20s %s\n", f.names[i], f.vals[i] ? f.vals[i] : "(no value)");
	}
	pfile_free(&f);
	return 0;
}

int cc_persist_cmd(const char *prog, bool json, int argc, char **argv, cc_config_set_fn set,
		   const void *ctx)
{
	int ret;

	if (!argc)
		return CC_PERSIST_NOT_MINE;
	if (!strcmp(argv[0], "--show-persistent")) {
		if (argc == 1)
			return persist_show(prog, json);
	} else if (!strcmp(argv[0], "--unpersist")) {
		if (argc == 2)
			return persist_remove(prog, argv[1]);
	} else if (!strcmp(argv[0], "--persist")) {
		if (argc == 3) {
			/* Nothing set, nothing written, for a value the file cannot hold. */
			if (check_value(prog, argv[1], argv[2]))
				return 1;
			ret = set(ctx, 2, argv + 1);
			return ret ? ret : cc_persist_put(prog, argv[1], argv[2]) ? 1 : 0;
		}
	} else {
		return CC_PERSIST_NOT_MINE;
	}
	fprintf(stderr, "%s: usage: config --persist NAME VALUE | config --unpersist NAME | "
		"config --show-persistent\n", prog);
	return 2;
}
