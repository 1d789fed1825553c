/* The faults of `ringctl trace`: each line of faults.log, and the faults the
 * members' logs show by themselves (a crash, a loss, a pause, a skip...),
 * merged so that one incident is one fault, each timed to the next grant.
 * docs/testing.md ("Faults and recovery") defines every rule used here. */
#include "ctl/trace_faults.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/node.h"

/* What one line of evidence says. The order is also how telling each is,
 * when an incident is named after its most telling signal. */
enum sig_kind {
	S_LISTED,   /* a line of faults.log */
	S_CRASH,    /* a member's life ended without node_stop (inferred) */
	S_PAUSE,    /* pause_detected */
	S_SKIP,     /* successor_skip */
	S_LOSS,     /* loss_suspect after a silence */
	S_REJOIN,   /* member_rejoin */
	S_STALE,    /* token_stale_drop */
	S_REGEN,    /* token_regen: evidence only, never a fault by itself */
	S_NOQUORUM, /* no_quorum: evidence only */
};

static bool evidence_only(enum sig_kind k)
{
	return k == S_REGEN || k == S_NOQUORUM;
}

struct sig {
	uint64_t start;    /* its first evidence: when the fault began, as far as it tells */
	uint64_t t;        /* when it was logged (a crash: the member's last line) */
	uint64_t ms;       /* silent_ms, a pause's ms */
	uint64_t until;    /* a crash: the member's next start, or 0 */
	uint32_t by;       /* the member that logged it (0: faults.log) */
	uint32_t subject;  /* the member it is about, or 0 */
	enum sig_kind kind;
	char what[48];     /* a faults.log line's text */
};

/* One life of a member: one process, from its start (or the first line of
 * its file) to its stop, its next start, or the end of its file. */
struct life {
	uint32_t node;
	uint64_t first_t, last_t, restart_t;
	uint64_t hb_ms;    /* its heartbeat_ms (node_start), 0 if unknown */
	uint64_t crash_t;  /* when it crashed, if it did (judge_life) */
	bool crashed;
	bool stopped, holding;
	bool in_cs; /* a client of it is in the critical region: it holds the token */
	bool lived; /* it started, or logged a core event: not just ringd's preamble */
	bool started; /* its file shows its node_start */
};

struct sight {
	uint64_t t;
	uint32_t node;
	uint32_t to; /* a token_pass's: the hop that gave that member the token */
};

struct grant_at {
	uint64_t t;
	uint32_t node;
	uint64_t fence;
};

#define EVIDENCE_MAX 6 /* signals named per fault; the rest are counted */

struct incident {
	uint64_t start;
	uint32_t subject;
	size_t lead;  /* the signal that names it */
	bool listed;  /* from faults.log */
	bool inferred; /* the logs show it (alone, or too) */
	size_t ev[EVIDENCE_MAX], nev;
	bool recovered;
	uint64_t recovery_us;
	uint32_t gnode;
	uint64_t gfence;
};

struct ring_trace_faults {
	struct sig *s;
	size_t ns, caps;
	struct life *lv;
	size_t nl, capl;
	struct sight *si;
	size_t nsi, capsi;
	struct grant_at *g;
	size_t ng, capg;
	struct incident *in;
	size_t nin, capin;
	/* the file being read: the member its last line was of */
	bool in_life;
	struct life cur;
	bool retx;          /* a run of retransmits is going on, */
	uint32_t retx_to;   /* to this member, */
	uint64_t retx_start; /* since then */
	/* and the others it speaks for, when several members' logs share it */
	struct reader *rd;
	size_t nrd, caprd;
	bool active;        /* cur and the retransmit run belong to active_node */
	uint32_t active_node;
};

/* One member's place in the file being read, while another's lines are. */
struct reader {
	uint32_t node;
	bool in_life;
	struct life cur;
	bool retx;
	uint32_t retx_to;
	uint64_t retx_start;
};

/* Scans for corroboration look this far ahead, so that a huge log costs
 * time in proportion to its size. */
#define SCAN_MAX 4096

bool ring_trace_grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	if (*cap > SIZE_MAX / 4 / size)
		return false;
	size_t c = *cap ? *cap * 2 : 64;
	void *q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

struct ring_trace_faults *ring_trace_faults_new(void)
{
	return calloc(1, sizeof(struct ring_trace_faults));
}

void ring_trace_faults_free(struct ring_trace_faults *fs)
{
	if (!fs)
		return;
	free(fs->rd);
	free(fs->s);
	free(fs->lv);
	free(fs->si);
	free(fs->g);
	free(fs->in);
	free(fs);
}

static struct sig *add_sig(struct ring_trace_faults *fs, enum sig_kind k, uint64_t t,
			   uint64_t start, uint32_t by, uint32_t subject)
{
	if (!ring_trace_grow((void **)&fs->s, &fs->caps, fs->ns, sizeof *fs->s))
		return NULL;
	struct sig *s = &fs->s[fs->ns++];
	memset(s, 0, sizeof *s);
	s->kind = k;
	s->t = t;
	s->start = start;
	s->by = by;
	s->subject = subject < 65536 ? subject : 0; /* ids are 1..65535; garbage is nobody */
	return s;
}

/* T minus MS milliseconds, never before 0. */
static uint64_t before(uint64_t t, uint64_t ms)
{
	return ms > t / 1000 ? 0 : t - ms * 1000;
}

static int end_life(struct ring_trace_faults *fs)
{
	if (!fs->in_life)
		return 0;
	fs->in_life = false;
	if (!ring_trace_grow((void **)&fs->lv, &fs->capl, fs->nl, sizeof *fs->lv))
		return -RING_ENOMEM;
	fs->lv[fs->nl++] = fs->cur;
	return 0;
}

static void begin_life(struct ring_trace_faults *fs, uint32_t node, uint64_t t)
{
	memset(&fs->cur, 0, sizeof fs->cur);
	fs->cur.node = node;
	fs->cur.first_t = fs->cur.last_t = t;
	fs->in_life = true;
}

static int sighted(struct ring_trace_faults *fs, const struct ring_trace_line *l)
{
	if (!ring_trace_grow((void **)&fs->si, &fs->capsi, fs->nsi, sizeof *fs->si))
		return -RING_ENOMEM;
	uint32_t to = l->core == RING_LOG_TOKEN_PASS ? (uint32_t)l->field[0] : 0;
	fs->si[fs->nsi++] = (struct sight){l->t, l->node, to};
	return 0;
}

/* Whether the member holds the token after line L, and whether the token
 * showed itself in it (a sighting; a grant is one too). */
static int track_token(struct ring_trace_faults *fs, const struct ring_trace_line *l)
{
	bool sight = false;
	switch ((enum ring_log_event)l->core) {
	case RING_LOG_CS_ENTER:
		if (!ring_trace_grow((void **)&fs->g, &fs->capg, fs->ng, sizeof *fs->g))
			return -RING_ENOMEM;
		fs->g[fs->ng++] = (struct grant_at){l->t, l->node, l->field[0]};
		fs->cur.in_cs = true;
		/* fall through */
	case RING_LOG_TOKEN_RECV:
	case RING_LOG_TOKEN_REGEN:
	case RING_LOG_TOKEN_PARK:
		fs->cur.holding = true;
		sight = true;
		break;
	case RING_LOG_TOKEN_PASS:
	case RING_LOG_TOKEN_UNPARK:
		fs->cur.holding = false;
		sight = true;
		break;
	case RING_LOG_CS_EXIT:
	case RING_LOG_LEASE_EXPIRED:
		fs->cur.in_cs = false;
		sight = true;
		break;
	case RING_LOG_MEMBER_REJOIN: /* the holder re-epochs its token */
		sight = true;
		break;
	case RING_LOG_LEAVE_DONE:
		fs->cur.holding = false;
		break;
	default:
		break;
	}
	return sight ? sighted(fs, l) : 0;
}

/* A retransmit starts a run, or goes on with the one to the same member. */
static void note_retransmit(struct ring_trace_faults *fs, const struct ring_trace_line *l)
{
	if (!fs->retx || fs->retx_to != l->field[0]) {
		fs->retx = true;
		fs->retx_to = (uint32_t)l->field[0];
		fs->retx_start = l->t;
	}
}

/* The signal line L gives, if any. RETX: a run of retransmits came right
 * before it. */
static int core_signal(struct ring_trace_faults *fs, const struct ring_trace_line *l, bool retx)
{
	struct sig *s = NULL;
	switch ((enum ring_log_event)l->core) {
	case RING_LOG_LOSS_SUSPECT:
		/* silent_ms 0: it never heard a token, the ring's first
		 * election, not a loss. */
		if (l->field[0] == 0)
			return 0;
		if ((s = add_sig(fs, S_LOSS, l->t, before(l->t, l->field[0]), l->node, 0)))
			s->ms = l->field[0];
		break;
	case RING_LOG_PAUSE_DETECTED:
		if ((s = add_sig(fs, S_PAUSE, l->t, before(l->t, l->field[0]), l->node, l->node)))
			s->ms = l->field[0];
		break;
	case RING_LOG_RETRANSMIT:
		note_retransmit(fs, l);
		return 0;
	case RING_LOG_SUCCESSOR_SKIP: {
		/* It began with the first of the retransmits that led to it. */
		uint32_t dead = (uint32_t)l->field[0];
		bool run = retx && fs->retx_to == dead;
		s = add_sig(fs, S_SKIP, l->t, run ? fs->retx_start : l->t, l->node, dead);
		fs->cur.holding = true; /* it passes on a token it still has */
		break;
	}
	case RING_LOG_MEMBER_REJOIN:
		s = add_sig(fs, S_REJOIN, l->t, l->t, l->node, (uint32_t)l->field[0]);
		break;
	case RING_LOG_TOKEN_STALE_DROP:
		s = add_sig(fs, S_STALE, l->t, l->t, l->node, 0);
		break;
	case RING_LOG_TOKEN_REGEN:
		s = add_sig(fs, S_REGEN, l->t, l->t, l->node, 0);
		break;
	case RING_LOG_NO_QUORUM:
		fs->cur.holding = false; /* it dropped its token */
		s = add_sig(fs, S_NOQUORUM, l->t, l->t, l->node, 0);
		break;
	default:
		return 0;
	}
	return s ? 0 : -RING_ENOMEM;
}

/* A member's own events: does it hold the token now, does the token show
 * itself here, and is this a signal of a fault? */
static int core_line(struct ring_trace_faults *fs, const struct ring_trace_line *l)
{
	/* A run of retransmits is only the one right before this line. */
	bool retx = fs->retx;
	if (l->core != RING_LOG_RETRANSMIT)
		fs->retx = false;
	if (track_token(fs, l) < 0)
		return -RING_ENOMEM;
	return core_signal(fs, l, retx);
}

static struct reader *reader_of(struct ring_trace_faults *fs, uint32_t node)
{
	for (size_t i = 0; i < fs->nrd; i++)
		if (fs->rd[i].node == node)
			return &fs->rd[i];
	if (!ring_trace_grow((void **)&fs->rd, &fs->caprd, fs->nrd, sizeof *fs->rd))
		return NULL;
	fs->rd[fs->nrd] = (struct reader){.node = node};
	return &fs->rd[fs->nrd++];
}

/* Makes NODE's place in the file the current one (cur, the retransmit
 * run), keeping the previous member's aside: lives are per member, also
 * when several members' logs are interleaved in one file. */
static int switch_to(struct ring_trace_faults *fs, uint32_t node)
{
	if (fs->active && fs->active_node == node)
		return 0;
	if (fs->active) {
		struct reader *was = reader_of(fs, fs->active_node);
		if (!was)
			return -RING_ENOMEM;
		*was = (struct reader){fs->active_node, fs->in_life, fs->cur, fs->retx, fs->retx_to,
				       fs->retx_start};
	}
	struct reader *now = reader_of(fs, node);
	if (!now)
		return -RING_ENOMEM;
	fs->in_life = now->in_life;
	fs->cur = now->cur;
	fs->retx = now->retx;
	fs->retx_to = now->retx_to;
	fs->retx_start = now->retx_start;
	fs->active = true;
	fs->active_node = node;
	return 0;
}

int ring_trace_faults_line(struct ring_trace_faults *fs, const struct ring_trace_line *l)
{
	int rc = 0;
	if (l->shell == RING_TRACE_SHELL_FAULT) {
		struct sig *s = add_sig(fs, S_LISTED, l->t, l->t, 0, 0);
		if (!s)
			return -RING_ENOMEM;
		snprintf(s->what, sizeof s->what, "%s", l->what ? l->what : "?");
		/* "kill 3", "pause 3": the member it is about. */
		char verb[16];
		unsigned id;
		int end = 0;
		if (sscanf(s->what, "%15s %u%n", verb, &id, &end) == 2 && s->what[end] == '\0' &&
		    id > 0 && id < 65536)
			s->subject = id;
		return 0;
	}
	if (l->node == 0)
		return 0;
	if ((rc = switch_to(fs, l->node)) < 0)
		return rc;
	if (l->shell == RING_TRACE_SHELL_START && fs->in_life && fs->cur.lived) {
		/* A start after no stop: the life before it crashed. (Lines
		 * before a first start, as auth_off, belong to that start.) */
		if (!fs->cur.stopped)
			fs->cur.restart_t = l->t;
		if ((rc = end_life(fs)) < 0)
			return rc;
	}
	if (!fs->in_life || fs->cur.node != l->node) {
		if ((rc = end_life(fs)) < 0)
			return rc;
		begin_life(fs, l->node, l->t);
	}
	if (l->shell == RING_TRACE_SHELL_STOP) {
		fs->cur.stopped = true;
		fs->cur.holding = false;
	}
	if (l->shell == RING_TRACE_SHELL_START || l->core >= 0)
		fs->cur.lived = true;
	if (l->shell == RING_TRACE_SHELL_START) {
		fs->cur.started = true;
		fs->cur.hb_ms = l->hb_ms;
	}
	if (l->core >= 0 && (rc = core_line(fs, l)) < 0)
		return rc;
	if (l->t > fs->cur.last_t)
		fs->cur.last_t = l->t;
	return 0;
}

void ring_trace_faults_end_file(struct ring_trace_faults *fs)
{
	/* Every member the file spoke for: its life ends with the file. Out
	 * of memory, a life is not judged. */
	if (fs->active)
		(void)end_life(fs);
	for (size_t i = 0; i < fs->nrd; i++) {
		if (fs->active && fs->rd[i].node == fs->active_node)
			continue;
		fs->in_life = fs->rd[i].in_life;
		fs->cur = fs->rd[i].cur;
		(void)end_life(fs);
	}
	fs->in_life = false;
	fs->retx = false;
	fs->active = false;
	fs->nrd = 0;
}

/* ---- inference ---- */

static int by_t_sight(const void *a, const void *b)
{
	const struct sight *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int by_t_grant(const void *a, const void *b)
{
	const struct grant_at *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int by_node_time(const void *a, const void *b)
{
	const struct life *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->first_t < y->first_t ? -1 : x->first_t > y->first_t;
}

/* Sorting signals needs the array; qsort has no context argument. */
static const struct sig *sort_sigs;

static int by_start_idx(const void *a, const void *b)
{
	const struct sig *x = &sort_sigs[*(const size_t *)a], *y = &sort_sigs[*(const size_t *)b];
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int by_t_idx(const void *a, const void *b)
{
	const struct sig *x = &sort_sigs[*(const size_t *)a], *y = &sort_sigs[*(const size_t *)b];
	return x->t < y->t ? -1 : x->t > y->t;
}

static int by_incident_start(const void *a, const void *b)
{
	const struct incident *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The number of grants at or before T: two moments with the same count
 * have no grant between them. */
static size_t slot(const struct ring_trace_faults *fs, uint64_t t)
{
	size_t lo = 0, hi = fs->ng;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fs->g[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first of IDX (sorted by t) logged after T. */
static size_t first_after(const struct sig *s, const size_t *idx, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[idx[mid]].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether any member but NODE showed the token after T and before UNTIL. */
static bool token_seen_elsewhere(const struct ring_trace_faults *fs, uint32_t node, uint64_t t,
				 uint64_t until)
{
	size_t lo = 0, hi = fs->nsi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fs->si[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i < fs->nsi && fs->si[i].t < until; i++, k++) {
		if (k >= SCAN_MAX)
			return true; /* a busy ring: the token surely moved on */
		/* The pass that gave NODE the token may be logged after
		 * NODE's token_recv: it is not the token elsewhere. */
		if (fs->si[i].node != node && fs->si[i].to != node)
			return true;
	}
	return false;
}

/* The skips and the losses, each by time: what a crash is confirmed by. */
struct crash_evidence {
	size_t *skips, nsk;
	size_t *losses, nlo;
};

static int crash_evidence_make(const struct ring_trace_faults *fs, struct crash_evidence *ce)
{
	ce->skips = malloc((fs->ns + 1) * sizeof *ce->skips);
	ce->losses = malloc((fs->ns + 1) * sizeof *ce->losses);
	if (!ce->skips || !ce->losses) {
		free(ce->skips);
		free(ce->losses);
		return -RING_ENOMEM;
	}
	ce->nsk = ce->nlo = 0;
	for (size_t i = 0; i < fs->ns; i++) {
		if (fs->s[i].kind == S_SKIP)
			ce->skips[ce->nsk++] = i;
		else if (fs->s[i].kind == S_LOSS)
			ce->losses[ce->nlo++] = i;
	}
	sort_sigs = fs->s;
	qsort(ce->skips, ce->nsk, sizeof *ce->skips, by_t_idx);
	qsort(ce->losses, ce->nlo, sizeof *ce->losses, by_t_idx);
	return 0;
}

static void crash_evidence_free(struct crash_evidence *ce)
{
	free(ce->skips);
	free(ce->losses);
}

/* When life I's member started again, in this file or another; 0 if the
 * logs do not show it. The lives are sorted by member, then time. */
static uint64_t next_start(const struct ring_trace_faults *fs, size_t i)
{
	const struct life *lf = &fs->lv[i];
	uint64_t restart = lf->restart_t;
	if (!restart && i + 1 < fs->nl && fs->lv[i + 1].node == lf->node &&
	    fs->lv[i + 1].first_t > lf->last_t)
		restart = fs->lv[i + 1].first_t;
	return restart;
}

/* When another member began to skip NODE as dead after its last word TL
 * (and before its RESTART, if any); 0 if none did. */
static uint64_t skipped_at(const struct ring_trace_faults *fs, const struct crash_evidence *ce,
			   uint32_t node, uint64_t tl, uint64_t restart)
{
	for (size_t k = first_after(fs->s, ce->skips, ce->nsk, tl), n = 0;
	     k < ce->nsk && n < SCAN_MAX; k++, n++) {
		const struct sig *sk = &fs->s[ce->skips[k]];
		if (restart && sk->t >= restart)
			break;
		if (sk->subject == node)
			return sk->start > tl ? sk->start : tl;
	}
	return 0;
}

/* Whether the token died with NODE, holder at its last word TL: the next
 * sign of the ring is a loss another member suspects, with no token seen
 * anywhere between. Then *HEARD is the latest time another member heard
 * the token alive (a suspicion's time less its silent_ms), over the
 * suspicions of that silence: the holder's last heartbeat that arrived;
 * *FIRST is the first of those suspicions. */
static bool lost_with(const struct ring_trace_faults *fs, const struct crash_evidence *ce,
		      uint32_t node, uint64_t tl, uint64_t restart, uint64_t *heard,
		      uint64_t *first)
{
	bool lost = false;
	*heard = *first = 0;
	for (size_t k = first_after(fs->s, ce->losses, ce->nlo, tl), n = 0;
	     k < ce->nlo && n < SCAN_MAX; k++, n++) {
		const struct sig *lo = &fs->s[ce->losses[k]];
		if (restart && lo->t >= restart)
			break;
		if (lo->by == node)
			continue;
		if (!lost) {
			if (token_seen_elsewhere(fs, node, tl, lo->t))
				return false;
			lost = true;
			*first = lo->t;
		} else if (token_seen_elsewhere(fs, node, *first, lo->t)) {
			break; /* a suspicion of a later silence */
		}
		uint64_t at = before(lo->t, lo->ms);
		if (at > *heard)
			*heard = at;
	}
	return lost;
}

/* When a holder whose token died with it crashed: after the last
 * heartbeat another member heard (HEARD), and before the next was due, so
 * half a heartbeat after it when node_start told the interval; never
 * before its own last word TL, never after the first suspicion. */
static uint64_t holder_crash_at(const struct life *lf, uint64_t heard, uint64_t suspected)
{
	uint64_t at = heard > lf->last_t ? heard : lf->last_t;
	if (heard >= lf->last_t && lf->hb_ms)
		at += lf->hb_ms * 1000 / 2;
	return suspected && at > suspected ? suspected : at;
}

/* Life I, if it ended without node_stop and the logs confirm a crash,
 * becomes a crash signal. */
static int judge_life(struct ring_trace_faults *fs, const struct crash_evidence *ce, size_t i)
{
	struct life *lf = &fs->lv[i];
	if (lf->stopped)
		return 0;
	uint64_t tl = lf->last_t, heard = 0, suspected = 0;
	uint64_t restart = next_start(fs, i);
	uint64_t skip_start = skipped_at(fs, ce, lf->node, tl, restart);
	/* A summons unparks the token, but it waits for the client in the
	 * region to leave: held all the same. */
	bool holding = lf->holding || lf->in_cs;
	bool lost = holding && lost_with(fs, ce, lf->node, tl, restart, &heard, &suspected);
	if (!restart && !skip_start && !lost)
		return 0; /* still running when the logs end, as far as they tell */
	/* When it began: when the token died with it (it held it then,
	 * and nobody else showed it before the others noticed), by the
	 * heartbeats the others heard; otherwise when the others met its
	 * absence. */
	uint64_t noticed = skip_start ? skip_start : restart;
	if (!lost && holding && noticed && token_seen_elsewhere(fs, lf->node, tl, noticed))
		holding = false; /* it passed the token on unlogged (no -v) */
	uint64_t start = tl;
	if (lost)
		start = holder_crash_at(lf, heard, suspected);
	else if (!holding)
		start = noticed;
	struct sig *s = add_sig(fs, S_CRASH, tl, start, lf->node, lf->node);
	if (!s)
		return -RING_ENOMEM;
	s->until = restart;
	lf->crashed = true;
	lf->crash_t = start;
	return 0;
}

/* A life that ended without node_stop is a crash when the logs confirm it:
 * the member started again later, or another member skipped it as dead,
 * or it held the token at its last word and the next sign of the ring was
 * a loss suspected by another member, with no token seen anywhere between. */
static int infer_crashes(struct ring_trace_faults *fs)
{
	struct crash_evidence ce;
	if (crash_evidence_make(fs, &ce) < 0)
		return -RING_ENOMEM;
	if (fs->nl > 1)
		qsort(fs->lv, fs->nl, sizeof *fs->lv, by_node_time);
	int rc = 0;
	for (size_t i = 0; i < fs->nl && rc == 0; i++)
		rc = judge_life(fs, &ce, i);
	crash_evidence_free(&ce);
	return rc;
}

static int new_incident(struct ring_trace_faults *fs, size_t lead, bool listed)
{
	if (!ring_trace_grow((void **)&fs->in, &fs->capin, fs->nin, sizeof *fs->in))
		return -1;
	struct incident *in = &fs->in[fs->nin];
	memset(in, 0, sizeof *in);
	in->start = fs->s[lead].start;
	in->subject = fs->s[lead].subject;
	in->lead = lead;
	in->listed = listed;
	return (int)fs->nin++;
}

static void add_evidence(struct ring_trace_faults *fs, struct incident *in, size_t si)
{
	const struct sig *s = &fs->s[si];
	in->inferred = true;
	if (in->nev < EVIDENCE_MAX)
		in->ev[in->nev] = si;
	in->nev++;
	/* An inferred fault is named after its most telling signal. */
	if (!in->listed && !evidence_only(s->kind) && s->kind < fs->s[in->lead].kind) {
		in->lead = si;
		in->subject = s->subject;
		/* A crash began when it did: the silences it caused began
		 * with the last heartbeat heard, a little before. */
		if (s->kind == S_CRASH)
			in->start = s->start;
	}
}

/* Where merge() is, in the signals and in the grants. */
struct merger {
	uint64_t *last_grant; /* by member: its latest grant so far */
	int *last_inc;        /* by member: the incident last about it, or -1 */
	size_t *listed_slot;  /* by listed incident (they come first, by start): its slot */
	size_t nlisted;
	size_t gi, li;        /* the grants and the listed incidents passed */
	int cur;              /* the incident merge() opened last, or -1, */
	size_t cur_slot;      /* and its slot */
};

static void merger_free(struct merger *mg)
{
	free(mg->last_grant);
	free(mg->last_inc);
	free(mg->listed_slot);
}

static int merger_make(const struct ring_trace_faults *fs, struct merger *mg)
{
	*mg = (struct merger){.cur = -1};
	mg->last_grant = calloc(65536, sizeof *mg->last_grant);
	mg->last_inc = malloc(65536 * sizeof *mg->last_inc);
	mg->listed_slot = malloc((fs->nin + 1) * sizeof *mg->listed_slot);
	if (!mg->last_grant || !mg->last_inc || !mg->listed_slot) {
		merger_free(mg);
		return -RING_ENOMEM;
	}
	for (size_t i = 0; i < 65536; i++)
		mg->last_inc[i] = -1;
	mg->nlisted = fs->nin; /* only listed incidents exist yet, by start */
	for (size_t i = 0; i < mg->nlisted; i++)
		mg->listed_slot[i] = slot(fs, fs->in[i].start);
	return 0;
}

/* The grants up to T: each member's latest is known. */
static void pass_grants(const struct ring_trace_faults *fs, struct merger *mg, uint64_t t)
{
	for (; mg->gi < fs->ng && fs->g[mg->gi].t <= t; mg->gi++)
		mg->last_grant[fs->g[mg->gi].node & 0xffff] = fs->g[mg->gi].t;
}

/* The listed incidents that began by T: each is the last about its member. */
static void pass_listed(const struct ring_trace_faults *fs, struct merger *mg, uint64_t t)
{
	for (; mg->li < mg->nlisted && fs->s[fs->in[mg->li].lead].start <= t; mg->li++)
		if (fs->in[mg->li].subject)
			mg->last_inc[fs->in[mg->li].subject] = (int)mg->li;
}

/* A crash: the listed fault of that member after its last word and before
 * its next start, or -1. */
static int crash_target(const struct ring_trace_faults *fs, const struct merger *mg,
			const struct sig *s)
{
	for (size_t k = 0; k < mg->nlisted; k++) {
		const struct incident *in = &fs->in[k];
		if (in->subject == s->subject && in->start >= s->t &&
		    (!s->until || in->start <= s->until))
			return (int)k;
	}
	return -1;
}

/* A skip or a rejoin: the crash or listed fault of that member it follows,
 * if the member has not been granted since; or -1. */
static int follow_target(const struct ring_trace_faults *fs, const struct merger *mg,
			 const struct sig *s)
{
	int k = mg->last_inc[s->subject];
	if (k < 0)
		return -1;
	const struct incident *in = &fs->in[k];
	enum sig_kind lk = fs->s[in->lead].kind;
	if ((lk == S_CRASH || lk == S_LISTED) && in->subject == s->subject &&
	    mg->last_grant[s->subject] <= in->start)
		return k;
	return -1;
}

/* The first listed incident with no grant between its start and a signal
 * in slot K_SLOT, or -1. */
static int listed_in_slot(const struct merger *mg, size_t k_slot)
{
	size_t lo = 0, hi = mg->nlisted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (mg->listed_slot[mid] < k_slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < mg->nlisted && mg->listed_slot[lo] == k_slot ? (int)lo : -1;
}

/* The incident signal S (in slot K_SLOT) belongs to, by the rules of
 * merge(), or -1 for none yet. */
static int incident_for(const struct ring_trace_faults *fs, const struct merger *mg,
			const struct sig *s, size_t k_slot)
{
	int target = -1;
	if (s->kind == S_CRASH)
		target = crash_target(fs, mg, s);
	if (target < 0 && s->subject && (s->kind == S_SKIP || s->kind == S_REJOIN))
		target = follow_target(fs, mg, s);
	if (target < 0)
		target = listed_in_slot(mg, k_slot);
	if (target < 0 && mg->cur >= 0 && mg->cur_slot == k_slot)
		target = mg->cur;
	return target;
}

/* Which incident a signal of the logs belongs to: a faults.log line about
 * the same member that the signal follows (a crash: whose fault came after
 * its last word and before its next start; a skip or rejoin: after a crash
 * or a listed fault of that member, which has not been granted since);
 * else one with no grant between their starts, faults.log's first. */
static int merge(struct ring_trace_faults *fs, const size_t *order, size_t n_in)
{
	struct merger mg;
	if (merger_make(fs, &mg) < 0)
		return -RING_ENOMEM;
	int rc = 0;
	for (size_t o = 0; o < n_in; o++) {
		size_t si = order[o];
		const struct sig *s = &fs->s[si];
		pass_grants(fs, &mg, s->start);
		if (s->kind == S_LISTED) {
			pass_listed(fs, &mg, s->start);
			continue;
		}
		size_t k_slot = slot(fs, s->start);
		int target = incident_for(fs, &mg, s, k_slot);
		if (target < 0) {
			if (evidence_only(s->kind))
				continue;
			target = new_incident(fs, si, false);
			if (target < 0) {
				rc = -RING_ENOMEM;
				break;
			}
			mg.cur = target;
			mg.cur_slot = k_slot;
		}
		add_evidence(fs, &fs->in[target], si);
		if (fs->in[target].subject)
			mg.last_inc[fs->in[target].subject] = target;
	}
	merger_free(&mg);
	return rc;
}

/* The life of NODE that T falls in, the latest that began at or before T;
 * NULL when the logs have none. *FIRST: it is NODE's first in the logs, or
 * the life before it ended with node_stop (a clean start either way). */
static const struct life *life_at(const struct ring_trace_faults *fs, uint32_t node, uint64_t t,
				  bool *first)
{
	const struct life *at = NULL, *prev = NULL;
	for (size_t i = 0; i < fs->nl; i++) {
		const struct life *lf = &fs->lv[i];
		if (lf->node != node || lf->first_t > t)
			continue;
		if (!at || lf->first_t > at->first_t) {
			prev = at;
			at = lf;
		} else if (!prev || lf->first_t > prev->first_t) {
			prev = lf;
		}
	}
	*first = !prev || prev->stopped;
	return at;
}

/* Whether a signal is only a member starting, not a fault: a member in a
 * clean start (its first in the logs, or after a node_stop: a graceful
 * restart; its node_start is there) being admitted (member_rejoin of it),
 * or that member suspecting a loss of a silence that began before any
 * token showed anywhere in the logs, or before it started: there was none
 * yet for it to lose. (Its own log cannot tell whether it has seen the
 * token: without -v a member that does not hold it logs nothing of it.)
 * After a crash the member's start is judged as usual: the crash is the
 * fault. */
static bool start_up(const struct ring_trace_faults *fs, const struct sig *s)
{
	uint32_t who = s->kind == S_REJOIN ? s->subject : s->kind == S_LOSS ? s->by : 0;
	bool first;
	const struct life *lf = who ? life_at(fs, who, s->t, &first) : NULL;
	if (!lf || !first || !lf->started)
		return false;
	if (s->kind == S_REJOIN)
		return true;
	return fs->nsi == 0 || s->start < fs->si[0].t || s->start <= lf->first_t;
}

/* Drops the ring's own start before anything is judged. */
static void drop_start_up(struct ring_trace_faults *fs)
{
	size_t kept = 0;
	for (size_t i = 0; i < fs->ns; i++)
		if (!start_up(fs, &fs->s[i]))
			fs->s[kept++] = fs->s[i];
	fs->ns = kept;
}

/* A suspicion's silence is what that member heard; heartbeats are not
 * logged, so a token seen anywhere later (a grant at the member that
 * then died with it) is where the silence really began. Otherwise a
 * crash of a holder just granted looks like a loss before it. */
static void date_silences(struct ring_trace_faults *fs)
{
	for (size_t i = 0; i < fs->ns; i++) {
		struct sig *sg = &fs->s[i];
		if (sg->kind != S_LOSS)
			continue;
		size_t lo = 0, hi = fs->nsi; /* the sightings before the suspicion */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (fs->si[mid].t < sg->t)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && fs->si[lo - 1].t > sg->start)
			sg->start = fs->si[lo - 1].t;
	}
}

/* The signals, by start, into incidents: each line of faults.log is a
 * fault of its own, as it always was; the logs' signals join one or open
 * their own (merge()). */
static int make_incidents(struct ring_trace_faults *fs)
{
	size_t *order = malloc((fs->ns + 1) * sizeof *order);
	if (!order)
		return -RING_ENOMEM;
	for (size_t i = 0; i < fs->ns; i++)
		order[i] = i;
	sort_sigs = fs->s;
	qsort(order, fs->ns, sizeof *order, by_start_idx);
	int rc = 0;
	for (size_t o = 0; o < fs->ns && rc == 0; o++)
		if (fs->s[order[o]].kind == S_LISTED && new_incident(fs, order[o], true) < 0)
			rc = -RING_ENOMEM;
	if (rc == 0)
		rc = merge(fs, order, fs->ns);
	free(order);
	if (rc < 0)
		return rc;
	if (fs->nin > 1)
		qsort(fs->in, fs->nin, sizeof *fs->in, by_incident_start);
	return 0;
}

/* Each incident's recovery, the first grant after its start, and the
 * totals. */
static void time_recoveries(struct ring_trace_faults *fs, struct ring_trace_fault_totals *tot)
{
	for (size_t i = 0; i < fs->nin; i++) {
		struct incident *in = &fs->in[i];
		size_t k = slot(fs, in->start); /* the first grant after its start */
		in->recovered = k < fs->ng;
		if (in->recovered) {
			in->recovery_us = fs->g[k].t - in->start;
			in->gnode = fs->g[k].node;
			in->gfence = fs->g[k].fence;
		}
		tot->faults++;
		in->listed ? tot->listed++ : tot->inferred++;
		if (!in->recovered)
			tot->unrecovered++;
		else if (in->recovery_us > tot->slowest_us)
			tot->slowest_us = in->recovery_us;
		if (in->listed) {
			tot->listed_count++;
			if (in->recovered && in->recovery_us > tot->listed_slowest_us)
				tot->listed_slowest_us = in->recovery_us;
		}
	}
}

int ring_trace_faults_resolve(struct ring_trace_faults *fs, struct ring_trace_fault_totals *tot)
{
	memset(tot, 0, sizeof *tot);
	if (fs->ng > 1)
		qsort(fs->g, fs->ng, sizeof *fs->g, by_t_grant);
	if (fs->nsi > 1)
		qsort(fs->si, fs->nsi, sizeof *fs->si, by_t_sight);
	drop_start_up(fs);
	date_silences(fs);
	int rc = infer_crashes(fs);
	if (rc == 0)
		rc = make_incidents(fs);
	if (rc < 0)
		return rc;
	time_recoveries(fs, tot);
	return 0;
}

bool ring_trace_faults_crashed(const struct ring_trace_faults *fs, uint32_t node, uint64_t t,
			       uint64_t *at)
{
	for (size_t i = 0; i < fs->nl; i++) {
		const struct life *lf = &fs->lv[i];
		if (lf->node == node && lf->first_t <= t && t <= lf->last_t) {
			*at = lf->crash_t;
			return lf->crashed;
		}
	}
	return false;
}

/* ---- report ---- */

static void name_of(const struct ring_trace_faults *fs, const struct incident *in, char *buf,
		    size_t len)
{
	const struct sig *s = &fs->s[in->lead];
	switch (s->kind) {
	case S_LISTED:
		snprintf(buf, len, "%s", s->what);
		break;
	case S_CRASH:
		snprintf(buf, len, "crash n%u", s->subject);
		break;
	case S_PAUSE:
		snprintf(buf, len, "pause n%u", s->subject);
		break;
	case S_SKIP:
		snprintf(buf, len, "skip n%u", s->subject);
		break;
	case S_LOSS:
		snprintf(buf, len, "token loss");
		break;
	case S_REJOIN:
		snprintf(buf, len, "rejoin n%u", s->subject);
		break;
	default:
		snprintf(buf, len, "stale token at n%u", s->by);
		break;
	}
}

static void sig_text(const struct sig *s, char *buf, size_t len)
{
	switch (s->kind) {
	case S_CRASH:
		snprintf(buf, len, "n%u's log ends without node_stop%s", s->subject,
			 s->until ? " (restarted later)" : "");
		break;
	case S_PAUSE:
		snprintf(buf, len, "pause_detected n%u (%" PRIu64 " ms)", s->by, s->ms);
		break;
	case S_SKIP:
		snprintf(buf, len, "successor_skip n%u dead=%u", s->by, s->subject);
		break;
	case S_LOSS:
		snprintf(buf, len, "loss_suspect n%u (silent %" PRIu64 " ms)", s->by, s->ms);
		break;
	case S_REJOIN:
		snprintf(buf, len, "member_rejoin n%u id=%u", s->by, s->subject);
		break;
	case S_STALE:
		snprintf(buf, len, "token_stale_drop n%u", s->by);
		break;
	case S_REGEN:
		snprintf(buf, len, "token_regen n%u", s->by);
		break;
	case S_NOQUORUM:
		snprintf(buf, len, "no_quorum n%u", s->by);
		break;
	default:
		snprintf(buf, len, "%s", s->what);
		break;
	}
}

static void evidence_text(const struct ring_trace_faults *fs, const struct incident *in,
			  char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < in->nev && i < EVIDENCE_MAX && at < len; i++) {
		char one[96];
		sig_text(&fs->s[in->ev[i]], one, sizeof one);
		int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", one);
		at += w > 0 ? (size_t)w : 0;
	}
	if (in->nev > EVIDENCE_MAX && at < len)
		snprintf(buf + at, len - at, " and %zu more", in->nev - EVIDENCE_MAX);
}

static double secs(uint64_t us)
{
	return (double)us / 1e6;
}

void ring_trace_faults_print(const struct ring_trace_faults *fs, uint64_t base, size_t list_max,
			     FILE *out)
{
	size_t shown = 0, hidden = 0;
	for (size_t i = 0; i < fs->nin; i++) {
		const struct incident *in = &fs->in[i];
		if (!in->listed && shown++ >= list_max) {
			hidden++;
			continue;
		}
		char what[64], ev[700];
		name_of(fs, in, what, sizeof what);
		evidence_text(fs, in, ev, sizeof ev);
		double at = in->start > base ? secs(in->start - base) : 0.0;
		/* A faults.log fault keeps the line test/lab reads its recovery from. */
		fprintf(out, "%s at %.3f s: %-16s ", in->listed ? "fault" : "inferred fault", at,
			what);
		if (in->recovered)
			fprintf(out, "next grant %.3f s later (n%u fence %" PRIu64 ":%" PRIu64 ")",
				secs(in->recovery_us), in->gnode, in->gfence >> 32,
				in->gfence & 0xffffffffu);
		else
			fprintf(out, "no grant after it: unrecovered");
		if (in->inferred)
			fprintf(out, "; %s: %s", in->listed ? "the logs show it too" : "evidence", ev);
		fputc('\n', out);
	}
	if (hidden)
		fprintf(out, "... and %zu more inferred faults (--json lists them)\n", hidden);
}

json_t *ring_trace_faults_json(const struct ring_trace_faults *fs, uint64_t base, size_t max)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < fs->nin && i < max; i++) {
		const struct incident *in = &fs->in[i];
		char what[64], fence[48];
		name_of(fs, in, what, sizeof what);
		json_t *ev = json_array();
		for (size_t k = 0; ev && k < in->nev && k < EVIDENCE_MAX; k++) {
			char one[96];
			sig_text(&fs->s[in->ev[k]], one, sizeof one);
			json_array_append_new(ev, json_string(one));
		}
		snprintf(fence, sizeof fence, "%" PRIu64 ":%" PRIu64, in->gfence >> 32,
			 in->gfence & 0xffffffffu);
		json_t *o = json_pack(
			"{s:f, s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:I}", "at_s",
			in->start > base ? secs(in->start - base) : 0.0, "what", what, "source",
			in->listed ? (in->inferred ? "both" : "faults.log") : "inferred", "recovered",
			in->recovered, "recovery_s",
			in->recovered ? json_real(secs(in->recovery_us)) : json_null(), "next_grant_node",
			in->recovered ? json_integer(in->gnode) : json_null(), "next_grant_fence",
			in->recovered ? json_string(fence) : json_null(), "evidence",
			ev ? ev : json_array(), "evidence_count", (json_int_t)in->nev);
		if (o)
			json_array_append_new(a, o);
	}
	return a;
}
