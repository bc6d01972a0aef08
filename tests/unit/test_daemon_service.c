// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the systemd notifications of long work at stop
 * (daemon/service.c, td_service_got_on()): nothing within the first
 * TD_SERVICE_EXTEND_EVERY_NS, then EXTEND_TIMEOUT_USEC= at most once per
 * period while the work gets on, so that a long last drain is not killed
 * at TimeoutStopSec= and a stuck one is; nothing at all without a notify
 * socket. Time is given by the test, not read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/service.h"

#define SEC	1000000000ULL

/* How many datagrams wait on @fd, each of which must be @want. */
static int messages(int fd, const char *want)
{
	char buf[256];
	int n = 0;
	ssize_t len;

	while ((len = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) >= 0) {
		buf[len] = '\0';
		assert_string_equal(buf, want);
		n++;
	}
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	return n;
}

static void test_got_on_rate(void **state)
{
	char dir[] = "/tmp/td-test-notify-XXXXXX";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *ext = "EXTEND_TIMEOUT_USEC=15000000";
	uint64_t t0 = 1000 * SEC;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);

	/* No notify socket: nothing is sent, and the clock is not started. */
	unsetenv("NOTIFY_SOCKET");
	td_service_init();
	td_service_got_on(t0 - 10 * SEC);
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
	td_service_init();
	assert_int_equal(messages(fd, ext), 0);

	/* The first call starts the clock: a stop within 2 s asks for nothing. */
	td_service_got_on(t0);
	td_service_got_on(t0 + SEC);
	td_service_got_on(t0 + 2 * SEC - 1);
	assert_int_equal(messages(fd, ext), 0);
	/* Got on for 2 s: 15 s more, once per 2 s however often it is called. */
	td_service_got_on(t0 + 2 * SEC);
	td_service_got_on(t0 + 2 * SEC + 1);
	td_service_got_on(t0 + 3 * SEC);
	assert_int_equal(messages(fd, ext), 1);
	td_service_got_on(t0 + 4 * SEC);
	assert_int_equal(messages(fd, ext), 1);
	/* Not called for 10 s (stuck in one write): one more when it gets on again. */
	td_service_got_on(t0 + 14 * SEC);
	td_service_got_on(t0 + 15 * SEC);
	assert_int_equal(messages(fd, ext), 1);

	unsetenv("NOTIFY_SOCKET");
	close(fd);
	unlink(sa.sun_path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_got_on_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
