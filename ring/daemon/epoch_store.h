/* The durable epoch of one member (PROTOCOL.md §4.2): the file
 * STATE_DIR/node-ID.epoch holding "epoch N\n", read at start and replaced
 * atomically (write, fsync, rename, fsync the folder) before the core acts. */
#ifndef RING_EPOCH_STORE_H
#define RING_EPOCH_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/conf.h"
#include "common/state_dir.h"

struct ring_epoch_store {
	struct ring_state_dir dir; /* state_dir, fsynced after each rename */
	int spare_fd;              /* kept free for a save when descriptors run out */
	char name[32];             /* node-ID.epoch, in DIR */
	char tmp[40];              /* node-ID.epoch.tmp */
	char path[RING_PATH_MAX + 32]; /* for messages */
};

/* Keeps the file of member ID in DIR, the state_dir as ring_state_dir_open
 * checked it (S takes its own descriptor of it). Returns 0, or -RING_EIO
 * with the failed call in ERR. Close S even after a failure; set
 * S->dir.fd and S->spare_fd to -1 before when it may not be opened. */
int ring_epoch_store_open(struct ring_epoch_store *s, const struct ring_state_dir *dir,
			  uint16_t id, char *err, size_t errlen);

/* Reads the stored epoch into *EPOCH: 0 when the file does not exist (the
 * member never ran). Returns 0; -RING_EIO when the file cannot be read; or
 * -RING_ECONFIG when it holds anything but "epoch N" with N <= UINT32_MAX,
 * since guessing could reuse epochs and fences, or when it is a symbolic
 * link, another user's, or writable by others. The reason goes into ERR. */
int ring_epoch_store_load(struct ring_epoch_store *s, uint32_t *epoch, char *err, size_t errlen);

/* Stores EPOCH so that it survives a crash of the process or the machine
 * once this returns 0. Uses the spare descriptor when the process has none
 * left. Returns 0, or -RING_EIO with "cannot persist epoch to PATH: why" in
 * ERR; the old epoch is then still in place. */
int ring_epoch_store_save(struct ring_epoch_store *s, uint32_t epoch, char *err, size_t errlen);

void ring_epoch_store_close(struct ring_epoch_store *s);

#endif
