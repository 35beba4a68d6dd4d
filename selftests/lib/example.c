/* The README's libcoll example: AllReduce of 1M floats over the rank table. */
#include <coll.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const char *r = getenv("KCOLL_RANK");
	size_t n = 1 << 20, i;
	float *x = malloc(n * sizeof(*x));
	coll_comm_t *comm;
	coll_request_t *req;
	int err;

	if (!x)
		return 1;
	for (i = 0; i < n; i++)
		x[i] = 1.0f;
	err = coll_comm_init_ranktable(NULL, r ? (uint32_t)atoi(r) : 0, &comm);
	if (err) {
		fprintf(stderr, "example: %s\n", coll_last_error());
		free(x);
		return 1;
	}
	err = coll_allreduce(comm, x, x, n, COLL_FLOAT, COLL_SUM, &req);
	if (!err)
		err = coll_wait(&req, NULL);
	printf("rank %d: %s, x[0] = %g\n", coll_comm_rank(comm), coll_strerror(err), x[0]);
	coll_comm_destroy(comm);
	free(x);
	return err ? 1 : 0;
}
