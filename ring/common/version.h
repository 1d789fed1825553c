/* The version ringd and ringctl report (--version): set once, as VERSION in
 * the Makefile, with the git revision when built from a checkout. */
#ifndef RING_VERSION_H
#define RING_VERSION_H

/* "0.9.0 (git a1d6a48)", or "0.9.0" when built without a git checkout. */
const char *ring_version(void);

#endif
