/* SPDX-License-Identifier: GPL-2.0 */
/*
 * This boot's id: what tells files that outlive a reboot (a lock file's
 * owner marker, a recording's scratch directory) from this boot's.
 */
#ifndef TD_DAEMON_BOOTID_H
#define TD_DAEMON_BOOTID_H

/* /proc/sys/kernel/random/boot_id, read once; "" when it cannot be read. */
const char *td_boot_id(void);

#endif /* TD_DAEMON_BOOTID_H */
