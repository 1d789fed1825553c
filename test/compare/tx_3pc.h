/* Three-phase commit (Skeen): after every yes vote the coordinator first tells everyone
 * preCommit and collects their acks, and only then doCommit, so that no site commits while
 * another is still uncertain. When the coordinator is suspected, the survivors elect a new
 * one in a fixed order of epochs; it collects their states and decides from them
 * (termination protocol): commit if any site is precommitted, else abort. */
#ifndef TX_3PC_H
#define TX_3PC_H

#include "compare/tx.h"

extern const struct tx_proto tx_3pc;

#endif
