/* The faults `ringctl inject` plants in a running member: what is planted,
 * and the drop decisions the daemon's send and receive paths ask for. */
#include "daemon/inject.h"

#include <stdio.h>

#include "core/err.h"
#include "core/wire.h"

void ring_faults_init(struct ring_faults *f, uint64_t seed)
{
	f->drop_token = false;
	f->loss_pct = 0;
	ring_set_clear(&f->blocked);
	f->rng = seed ? seed : 1;
}

/* xorshift64: injected loss needs no quality, only no syscall. */
static bool chance(struct ring_faults *f, uint32_t pct)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng % 100 < pct;
}

bool ring_faults_lose(struct ring_faults *f, size_t idx)
{
	return ring_set_has(&f->blocked, idx) || (f->loss_pct && chance(f, f->loss_pct));
}

bool ring_faults_swallow_token(struct ring_faults *f, const uint8_t *buf, size_t len)
{
	if (!f->drop_token || ring_wire_peek_type(buf, len) != RING_MSG_TOKEN)
		return false;
	f->drop_token = false;
	return true;
}

bool ring_faults_blocked(const struct ring_faults *f, size_t idx)
{
	return ring_set_has(&f->blocked, idx);
}

static void log_inject(struct ring_log *log, const struct ring_ctl_request *r)
{
	char what[48];
	bool has_arg = r->inject == RING_INJECT_LOSS || r->inject == RING_INJECT_BLOCK ||
		       r->inject == RING_INJECT_UNBLOCK || r->inject == RING_INJECT_PAUSE;
	if (has_arg)
		snprintf(what, sizeof what, "%s %u", ring_inject_name(r->inject), r->arg);
	else
		snprintf(what, sizeof what, "%s", ring_inject_name(r->inject));
	struct ring_log_field f = RING_LF_S("what", what);
	ring_log_emit(log, "inject", false, &f, 1);
}

int ring_faults_apply(struct ring_faults *f, const struct ring_conf *conf, size_t me,
		      const struct ring_ctl_request *r, struct ring_log *log, char *why,
		      size_t whylen)
{
	if (!conf->allow_inject) {
		snprintf(why, whylen, "inject refused: allow_inject = false in %s", conf->path);
		return -RING_EFIELD;
	}
	int idx = -1;
	if (r->inject == RING_INJECT_BLOCK || r->inject == RING_INJECT_UNBLOCK) {
		idx = ring_layout_index(&conf->layout, (uint16_t)r->arg);
		if (idx < 0 || (size_t)idx == me) {
			snprintf(why, whylen, "%u is not another member", r->arg);
			return -RING_EFIELD;
		}
	}
	log_inject(log, r);
	switch (r->inject) {
	case RING_INJECT_DROP_TOKEN:
		f->drop_token = true;
		break;
	case RING_INJECT_LOSS:
		f->loss_pct = r->arg;
		break;
	case RING_INJECT_BLOCK:
		ring_set_add(&f->blocked, (size_t)idx);
		break;
	case RING_INJECT_UNBLOCK:
		ring_set_del(&f->blocked, (size_t)idx);
		break;
	case RING_INJECT_PAUSE:
		break; /* the caller stalls, after its reply is out */
	case RING_INJECT_CLEAR:
		f->drop_token = false;
		f->loss_pct = 0;
		ring_set_clear(&f->blocked);
		break;
	}
	return 0;
}
