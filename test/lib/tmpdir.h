/* Scratch folders for the unit suites that touch the disk. */
#ifndef RING_TEST_TMPDIR_H
#define RING_TEST_TMPDIR_H

/* Removes DIR and everything under it; quietly does what it can. */
void tmpdir_remove(const char *dir);

#endif
