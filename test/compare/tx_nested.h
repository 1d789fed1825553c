/* Nested transactions (Coulouris et al.) as a two-level tree over the flat commit protocols:
 * the top-level transaction at site 0 opens a subtransaction at each first-level site, each
 * of which opens one at its second-level sites. A subtransaction that finishes commits
 * provisionally (nothing logged) and reports to its parent with the provisionally committed
 * sites below it; an aborted one takes its children's provisional commits with it, and its
 * parent goes on without it. When every report is in, the top level runs the flat protocol
 * (2PC or 3PC) among itself and the provisionally committed sites, which make their work
 * permanent or abort it with their parent's decision. */
#ifndef TX_NESTED_H
#define TX_NESTED_H

#include <stddef.h>
#include <stdint.h>

#include "compare/tx.h"

extern const struct tx_proto tx_nested_2pc, tx_nested_3pc;

/* The tree: the parent of SITE (1..n-1) among N sites; site 0 is the root,
 * sites 1..ceil((n-1)/2) the first level, the rest the second. */
size_t tx_nested_parent(size_t n, size_t site);

/* The sites that take part in the commit: the root and every site whose
 * subtransaction and ancestors committed provisionally, given the sites
 * (bit = index) whose own work fails. The checker's oracle. */
uint64_t tx_nested_members(size_t n, uint64_t failing);

#endif
