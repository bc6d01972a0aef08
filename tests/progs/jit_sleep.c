// SPDX-License-Identifier: GPL-2.0
/*
 * jit_sleep: code made at run time, as a JIT makes it. Copies a function
 * that sleeps through the nanosleep system call into anonymous executable
 * memory, writes MAPDIR/perf-PID.map as the JITs that support perf do
 * ("START SIZE jit_sleeper", hexadecimal), and calls that code COUNT times
 * for MS milliseconds each: the innermost user frame of every switch out of
 * the sleep is in memory no ELF file names; only the perf map does.
 *
 *   jit_sleep MS COUNT [MAPDIR [anon|memfd [keep]]]   (MAPDIR: default /tmp)
 *
 * With "memfd", the code is mapped twice from a memfd, written through one
 * view and run from the other, as .NET's W^X does: the code then lies in
 * a file (/memfd:jit_sleep), which is still no ELF file.
 *
 * Prints "jit_sleep pid=PID code=ADDR size=N" first. The map is removed at
 * exit, unless "keep" says to leave it, as Node's --perf-basic-prof and
 * CPython's -X perf do. x86-64 only (exit status 2 elsewhere).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef long (*sleeper_fn)(const struct timespec *req, struct timespec *rem);

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* mov $35 (__NR_nanosleep), %eax; syscall; ret: req and rem are in place. */
	static const uint8_t code[] = { 0xb8, 0x23, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3 };
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	char map[4096];
	struct timespec ts;
	sleeper_fn fn;
	long ms, count;
	uint8_t *mem;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: jit_sleep MS COUNT [MAPDIR [anon|memfd [keep]]]\n");
		return 2;
	}
	ms = atol(argv[1]);
	count = atol(argv[2]);
	/* Written, then made executable: W^X, as JITs do it today. */
	if (argc > 4 && !strcmp(argv[4], "memfd")) {
		int fd = memfd_create("jit_sleep", MFD_CLOEXEC);
		uint8_t *rw;

		if (fd < 0 || ftruncate(fd, 4096)) {
			perror("jit_sleep: memfd");
			return 1;
		}
		rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		mem = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		if (rw == MAP_FAILED || mem == MAP_FAILED) {
			perror("jit_sleep: mmap");
			return 1;
		}
		memcpy(rw, code, sizeof(code));
		munmap(rw, 4096);
		close(fd);
	} else {
		mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED) {
			perror("jit_sleep: mmap");
			return 1;
		}
		memcpy(mem, code, sizeof(code));
		if (mprotect(mem, 4096, PROT_READ | PROT_EXEC)) {
			perror("jit_sleep: mprotect");
			return 1;
		}
	}
	snprintf(map, sizeof(map), "%s/perf-%d.map", dir, (int)getpid());
	f = fopen(map, "w");
	if (!f || fprintf(f, "%lx %zx jit_sleeper\n", (unsigned long)(uintptr_t)mem,
			  sizeof(code)) < 0 || fclose(f)) {
		fprintf(stderr, "jit_sleep: %s: %s\n", map, strerror(errno));
		return 1;
	}
	printf("jit_sleep pid=%d code=%p size=%zu\n", (int)getpid(), (void *)mem, sizeof(code));
	fflush(stdout);
	fn = (sleeper_fn)(uintptr_t)mem;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (count-- > 0)
		fn(&ts, NULL);
	if (argc <= 5 || strcmp(argv[5], "keep"))
		unlink(map);
	return 0;
#else
	fprintf(stderr, "jit_sleep: x86-64 only\n");
	return 2;
#endif
}
