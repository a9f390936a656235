/* child.c: the program the launch-mode smoke test runs: a moment of CPU work, then exit code 7. */
#include <stdio.h>

int main(void)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 50000000ul; i++)
		x += i ^ (x >> 3);
	printf("child done (%lu)\n", (unsigned long)(x & 1));
	return 7;
}
