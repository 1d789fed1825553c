/* Two-phase commit whose coordinator is whoever holds a fenced lock (tx_fenced.c): the role is
 * a lease from a lock service whose grants carry a fence that only grows, every order carries
 * the orderer's fence, and a participant refuses anything older than the highest it has seen. */
#ifndef TX_FENCED_H
#define TX_FENCED_H

#include "compare/tx.h"

/* Fenced 2PC as compare_tx.c drives it, with its lock service (tx_proto.fenced). */
extern const struct tx_proto tx_2pc_fenced;

#endif
