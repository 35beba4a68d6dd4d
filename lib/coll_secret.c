// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcoll: the communicator's secret, from the caller, a file or the
 * environment.  With a secret the module admits a peer only when it proves
 * it knows the same bytes (uapi/linux/kcoll.h, kcoll_comm_create.secret).
 *
 * A secret file is refused when others than its owner may read or write
 * it, as ssh does with private keys: a secret everybody can read keeps
 * nobody out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll_internal.h"

static int coll_secret_len_ok(size_t len, const char *from)
{
	if (len < KCOLL_SECRET_MIN || len > KCOLL_SECRET_MAX)
		return coll_seterr(-EINVAL, "%s: the secret is %zu bytes, expected %d..%d "
				   "(e.g. 32 random bytes: head -c 32 /dev/urandom)", from, len,
				   KCOLL_SECRET_MIN, KCOLL_SECRET_MAX);
	return 0;
}

/* Read the secret file @path into @buf (KCOLL_SECRET_MAX bytes). */
static int coll_secret_read(const char *path, uint8_t *buf, size_t *len)
{
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return coll_seterr(-errno, "KCOLL_SECRET_FILE %s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = coll_seterr(-EINVAL, "KCOLL_SECRET_FILE %s is not a regular file", path);
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		ret = coll_seterr(-EACCES, "KCOLL_SECRET_FILE %s may be read or written by others "
				  "(mode %04o): chmod 600 it", path,
				  (unsigned int)(st.st_mode & 07777));
		goto out;
	}
	/* One byte more than allowed tells a file that is too long. */
	n = read(fd, buf, KCOLL_SECRET_MAX + 1);
	if (n < 0) {
		ret = coll_seterr(-errno, "KCOLL_SECRET_FILE %s: %s", path, strerror(errno));
		goto out;
	}
	/* A text file's final newline is not part of the secret. */
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	*len = (size_t)n;
	ret = coll_secret_len_ok(*len, "KCOLL_SECRET_FILE");
out:
	close(fd);
	return ret;
}

int coll_secret_get(const void *secret, size_t secret_len, uint8_t *buf, size_t *len,
		    const char **from)
{
	const char *path = getenv("KCOLL_SECRET_FILE");
	const char *env = getenv("KCOLL_SECRET");

	*len = 0;
	*from = NULL;
	if (secret) {
		*from = "coll_comm_opts.secret";
		if (coll_secret_len_ok(secret_len, *from))
			return -EINVAL;
		memcpy(buf, secret, secret_len);
		*len = secret_len;
		return 0;
	}
	if (path && *path) {
		*from = "KCOLL_SECRET_FILE";
		return coll_secret_read(path, buf, len);
	}
	if (env && *env) {
		*from = "KCOLL_SECRET";
		if (coll_secret_len_ok(strlen(env), *from))
			return -EINVAL;
		*len = strlen(env);
		memcpy(buf, env, *len);
	}
	return 0;
}
