/* Two-phase commit (Coulouris et al.): the coordinator asks canCommit?, commits only on every
 * participant's yes, tells doCommit or doAbort and collects haveCommitted. A participant that
 * voted yes is uncertain until it hears the decision: it asks the coordinator (getDecision)
 * and, in the cooperative variant, the other participants too. */
#ifndef TX_2PC_H
#define TX_2PC_H

#include "compare/tx.h"

/* 2PC as compare_tx.c drives it; tx_2pc_coop asks the other participants too. */
extern const struct tx_proto tx_2pc, tx_2pc_coop;

#endif
