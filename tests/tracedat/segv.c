/* tests/tracedat/segv.c: dies of a real SIGSEGV (a NULL store), so the trace holds a crash with a known comm. */
int main(void)
{
	volatile int *volatile p = 0;
	*p = 1;
	return 0;
}
