// SPDX-License-Identifier: GPL-2.0
/*
 * kshark-info: print the rows of a trace.dat as KernelShark's list view
 * gets them from libkshark (the library behind its Info column), for the
 * events whose name is given, one per line:
 *
 *   kshark-info FILE.dat [EVENT...]   (EVENT: name or system/name; default
 *                                      user_unwind_cookie user_unwind_stack)
 *
 *   <pid> <task> <system/event>: <info>
 *
 * Debian packages libkshark2 without its headers, so the few functions used
 * are declared here from KernelShark 2.2's documented API. Entries are only
 * handled through pointers, so no structure layout is assumed.
 * Exits 0 if at least one row was printed, 1 if none, 2 on errors.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct kshark_context;
struct kshark_entry;

bool kshark_instance(struct kshark_context **kshark_ctx);
int kshark_open(struct kshark_context *kshark_ctx, const char *file);
ssize_t kshark_load_entries(struct kshark_context *kshark_ctx, int sd,
			    struct kshark_entry ***data_rows);
int kshark_get_pid(const struct kshark_entry *entry);
char *kshark_get_event_name(const struct kshark_entry *entry);
char *kshark_get_task(const struct kshark_entry *entry);
char *kshark_get_info(const struct kshark_entry *entry);
void kshark_close_all(struct kshark_context *kshark_ctx);
void kshark_free(struct kshark_context *kshark_ctx);

static const char *const default_events[] = { "user_unwind_cookie", "user_unwind_stack" };

/* libkshark names events "system/name": match either form */
static bool wanted(const char *name, int nev, const char *const *ev)
{
	const char *slash = strchr(name, '/');
	int i;

	for (i = 0; i < nev; i++)
		if (!strcmp(name, ev[i]) || (slash && !strcmp(slash + 1, ev[i])))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *const *ev = default_events;
	struct kshark_context *ctx = NULL;
	struct kshark_entry **rows = NULL;
	int nev = 2, ret = 2, sd;
	ssize_t n, i, shown = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE.dat [EVENT...]\n", argv[0]);
		return 2;
	}
	if (argc > 2) {
		ev = (const char *const *)argv + 2;
		nev = argc - 2;
	}
	if (!kshark_instance(&ctx)) {
		fprintf(stderr, "kshark-info: no libkshark context\n");
		return 2;
	}
	sd = kshark_open(ctx, argv[1]);
	if (sd < 0) {
		fprintf(stderr, "kshark-info: libkshark cannot open %s\n", argv[1]);
		goto out;
	}
	n = kshark_load_entries(ctx, sd, &rows);
	if (n < 0) {
		fprintf(stderr, "kshark-info: no entries loaded from %s\n", argv[1]);
		goto out;
	}
	for (i = 0; i < n; i++) {
		char *name = kshark_get_event_name(rows[i]);
		char *task = NULL, *info = NULL;

		if (name && wanted(name, nev, ev)) {
			task = kshark_get_task(rows[i]);
			info = kshark_get_info(rows[i]);
			printf("%d %s %s: %s\n", kshark_get_pid(rows[i]),
			       task ? task : "?", name, info ? info : "(no info)");
			shown++;
		}
		free(name);
		free(task);
		free(info);
		free(rows[i]);
	}
	free(rows);
	fprintf(stderr, "kshark-info: %zd of %zd rows shown\n", shown, n);
	ret = shown ? 0 : 1;
out:
	kshark_close_all(ctx);
	kshark_free(ctx);
	return ret;
}
