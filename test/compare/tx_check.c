/* The atomic commit checker (tx_check.h) and its own test on bad histories. */
#include "compare/tx_check.h"

#include <stdio.h>
#include <string.h>

void tx_check_init(struct tx_check *k, size_t n)
{
	memset(k, 0, sizeof *k);
	k->n = n;
	k->commit_by = k->abort_by = -1;
	k->members = n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

void tx_check_members(struct tx_check *k, uint64_t members)
{
	k->members = members;
}

static bool member(const struct tx_check *k, size_t site)
{
	return site < 64 && (k->members >> site & 1);
}

const char *tx_check_vote(struct tx_check *k, size_t site, bool yes, char *what, size_t cap)
{
	unsigned char v = yes ? 1 : 2;
	if (site == TX_COORD || site >= k->n || !member(k, site)) {
		snprintf(what, cap, "site %zu is no participant and votes", site);
		return "vote";
	}
	if (k->vote[site] && k->vote[site] != v) {
		snprintf(what, cap, "p%zu voted %s, now %s", site, yes ? "no" : "yes",
			 yes ? "yes" : "no");
		return "vote";
	}
	k->vote[site] = v;
	return NULL;
}

const char *tx_check_decide(struct tx_check *k, size_t site, bool commit, char *what,
			    size_t cap)
{
	unsigned char d = commit ? 1 : 2;
	if (site >= k->n || !member(k, site)) {
		snprintf(what, cap, "site %zu is not in the commit and decides", site);
		return "validity";
	}
	if (k->decided[site] && k->decided[site] != d) {
		snprintf(what, cap, "site %zu decided %s, now %s", site, commit ? "abort" : "commit",
			 commit ? "commit" : "abort");
		return "atomicity";
	}
	k->decided[site] = d;
	if (commit) {
		for (size_t i = 1; i < k->n; i++)
			if (member(k, i) && k->vote[i] != 1) {
				snprintf(what, cap, "site %zu commits but p%zu %s", site, i,
					 k->vote[i] ? "voted no" : "has not voted");
				return "validity";
			}
		if (k->commit_by < 0)
			k->commit_by = (int)site;
	} else if (k->abort_by < 0) {
		k->abort_by = (int)site;
	}
	if (k->commit_by >= 0 && k->abort_by >= 0) {
		snprintf(what, cap, "site %d committed and site %d aborted", k->commit_by,
			 k->abort_by);
		return "atomicity";
	}
	return NULL;
}

/* ---- the checker's own test ---- */

/* One history: events "vS+", "vS-" (site S votes yes, no), "dS+", "dS-"
 * (decides commit, abort), and the invariant it must break (NULL: none). */
struct history {
	size_t n;
	const char *events[8];
	const char *breaks;
	uint64_t members; /* 0: all */
};

static const struct history histories[] = {
	{3, {"v1+", "v2+", "d0+", "d1+", "d2+"}, NULL, 0},
	{3, {"v1+", "v2-", "d0-", "d1-", "d2-"}, NULL, 0},
	{3, {"d1-", "d2-", "d0-"}, NULL, 0},
	{3, {"v1+", "v2+", "d0+", "d1-"}, "atomicity", 0},
	{3, {"v1+", "v2+", "d1-", "d0+"}, "atomicity", 0},
	{3, {"v1+", "d0+"}, "validity", 0},            /* a missing vote */
	{3, {"v1+", "v2-", "d0+"}, "validity", 0},     /* a no vote */
	{2, {"v1+", "d1+", "d1-"}, "atomicity", 0},    /* a changed decision */
	{2, {"v1+", "v1-"}, "vote", 0},
	{3, {"v1+", "d0+", "d1+"}, NULL, 0x3},      /* p2 is out of the commit */
	{3, {"v1+", "d0+", "d2-"}, "validity", 0x3}, /* and must not decide */
	{3, {"v2+"}, "vote", 0x3},
};

bool tx_check_selftest(char *why, size_t cap)
{
	for (size_t h = 0; h < sizeof histories / sizeof histories[0]; h++) {
		const struct history *hi = &histories[h];
		struct tx_check k;
		tx_check_init(&k, hi->n);
		if (hi->members)
			tx_check_members(&k, hi->members);
		const char *got = NULL;
		char what[160];
		for (size_t e = 0; e < 8 && hi->events[e] && !got; e++) {
			const char *ev = hi->events[e];
			size_t site = (size_t)(ev[1] - '0');
			bool yes = ev[2] == '+';
			got = ev[0] == 'v' ? tx_check_vote(&k, site, yes, what, sizeof what)
					   : tx_check_decide(&k, site, yes, what, sizeof what);
		}
		bool ok = hi->breaks ? got && !strcmp(got, hi->breaks) : !got;
		if (!ok) {
			snprintf(why, cap, "history %zu: expected %s, the checker said %s", h,
				 hi->breaks ? hi->breaks : "no failure", got ? got : "nothing");
			return false;
		}
	}
	return true;
}
