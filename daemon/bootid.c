// SPDX-License-Identifier: GPL-2.0
/*
 * This boot's id (see bootid.h).
 */
#include <stdio.h>
#include <string.h>

#include "bootid.h"

const char *td_boot_id(void)
{
	static char id[64];
	static int read_once;
	FILE *f;

	if (read_once)
		return id;
	read_once = 1;
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return id;
	if (!fgets(id, sizeof(id), f))
		id[0] = '\0';
	id[strcspn(id, "\n")] = '\0';
	fclose(f);
	return id;
}
