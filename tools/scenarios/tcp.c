/* hs_tcp: the paced TCP transfer of the network_disconnect scenario (sender and receiver; nc/socat are not guaranteed). */
/*
 * usage: hs_tcp recv ADDR PORT
 *        hs_tcp send ADDR PORT SECONDS KBPS
 *
 * recv listens on ADDR:PORT, prints "hs_tcp: pid N: listening on ..." once it
 * does, accepts one connection and reads until the sender closes it (exit 0)
 * or it fails (exit 1, the error printed: a reset, a timeout).
 * send connects to ADDR:PORT (retrying for up to 5 s while the receiver
 * starts) and sends KBPS KiB/s in 10 ms slices for SECONDS, then closes. A
 * steady, paced stream: like a game or a video call, and low enough that a
 * full capture of every tcp/net event keeps up with it. Exit 0 when every
 * byte was handed to the kernel, 1 on an error (printed).
 * Both print their byte counts at the end. Linux/POSIX only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_addr(const char *host, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)atoi(port));
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
		fprintf(stderr, "hs_tcp: '%s' is not an IPv4 address\n", host);
		return -1;
	}
	return 0;
}

static int do_recv(const struct sockaddr_in *sa)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    bind(ls, (const struct sockaddr *)sa, sizeof(*sa)) || listen(ls, 1)) {
		fprintf(stderr, "hs_tcp: cannot listen: %s\n", strerror(errno));
		return 1;
	}
	printf("hs_tcp: pid %lu: listening on %s:%u\n", (unsigned long)getpid(), inet_ntoa(sa->sin_addr),
	       ntohs(sa->sin_port));
	fflush(stdout);
	int s = accept(ls, NULL, NULL);
	if (s < 0) {
		fprintf(stderr, "hs_tcp: accept failed: %s\n", strerror(errno));
		return 1;
	}
	close(ls);
	printf("hs_tcp: accepted\n");
	fflush(stdout);
	static char buf[65536];
	unsigned long long total = 0;
	for (;;) {
		ssize_t n = read(s, buf, sizeof buf);
		if (n > 0) {
			total += (unsigned long long)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "hs_tcp: receive failed after %llu bytes: %s\n", total, strerror(errno));
			close(s);
			return 1;
		}
		break;
	}
	close(s);
	printf("hs_tcp: received %llu bytes\n", total);
	return 0;
}

static int do_send(const struct sockaddr_in *sa, double seconds, unsigned long kbps)
{
	printf("hs_tcp: pid %lu: sending %lu KiB/s for %.1f s to %s:%u\n", (unsigned long)getpid(), kbps, seconds,
	       inet_ntoa(sa->sin_addr), ntohs(sa->sin_port));
	fflush(stdout);
	int s = -1;
	double give_up = now_s() + 5.0;
	for (;;) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0) {
			fprintf(stderr, "hs_tcp: socket: %s\n", strerror(errno));
			return 1;
		}
		if (connect(s, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			break;
		int e = errno;
		close(s);
		if (now_s() > give_up) {
			fprintf(stderr, "hs_tcp: cannot connect: %s\n", strerror(e));
			return 1;
		}
		struct timespec ts = {0, 100 * 1000000L};
		nanosleep(&ts, NULL);
	}
	printf("hs_tcp: connected\n");
	fflush(stdout);
	static char buf[65536];
	memset(buf, 'h', sizeof buf);
	size_t slice = (size_t)kbps * 1024 / 100; /* per 10 ms */
	if (slice < 1)
		slice = 1;
	if (slice > sizeof buf)
		slice = sizeof buf;
	unsigned long long total = 0;
	double start = now_s(), next = start;
	int rc = 0;
	while (now_s() - start < seconds) {
		size_t off = 0;
		while (off < slice) {
			ssize_t n = send(s, buf + off, slice - off, MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				fprintf(stderr, "hs_tcp: send failed after %llu bytes: %s\n", total, strerror(errno));
				rc = 1;
				goto done;
			}
			off += (size_t)n;
			total += (unsigned long long)n;
		}
		next += 0.01;
		double wait = next - now_s();
		if (wait > 0) {
			struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
			nanosleep(&ts, NULL);
		}
	}
done:
	close(s);
	printf("hs_tcp: sent %llu bytes in %.1f s\n", total, now_s() - start);
	return rc;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return parse_addr(argv[2], argv[3], &sa) ? 2 : do_recv(&sa);
	if (argc == 6 && !strcmp(argv[1], "send"))
		return parse_addr(argv[2], argv[3], &sa) ? 2 : do_send(&sa, strtod(argv[4], NULL), strtoul(argv[5], NULL, 10));
	fputs("usage: hs_tcp recv ADDR PORT | send ADDR PORT SECONDS KBPS\n", stderr);
	return 2;
}
