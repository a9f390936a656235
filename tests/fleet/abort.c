/* tests/fleet/abort.c: a program that aborts (SIGABRT through abort()), the fleet root test's second incident beside hs_segv's NULL access. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	fputs("hs_abort: aborting\n", stderr);
	abort();
}
