/* The lease rule (docs/operations.md, "Choosing a lease"): the figures of
 * every member combined as the worst of any, the advice they imply, and
 * its reasoning as text. No I/O: ringctl and ringd print what it says. */
#include "common/advice.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ring_advice_init(struct ring_advice *a)
{
	memset(a, 0, sizeof *a);
}

static uint64_t sat_add(uint64_t x, uint64_t y)
{
	return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

/* X * NUM / DEN microseconds in whole milliseconds, rounded up; saturates
 * instead of wrapping, since a member's figures may be anything decode
 * lets through. */
static uint64_t scaled_ms(uint64_t us, uint64_t num, uint64_t den)
{
	uint64_t d = den * 1000u;
	uint64_t q = us / d, r = us % d;
	if (q > UINT64_MAX / num / 2)
		return UINT64_MAX;
	/* us * num / d = q * num + r * num / d, with r * num < d * num: no overflow */
	return q * num + (r * num + d - 1) / d;
}

void ring_advice_add(struct ring_advice *a, uint16_t id, const struct ring_advice_figures *f)
{
	a->members++;
	a->holds = sat_add(a->holds, f->holds);
	a->pauses = sat_add(a->pauses, f->pauses);
	if (f->p999_us > a->p999_us) {
		a->p999_us = f->p999_us;
		a->p999_at = id;
	}
	if (f->max_us > a->max_us) {
		a->max_us = f->max_us;
		a->max_at = id;
	}
	if (f->pause_max_us > a->pause_us) {
		a->pause_us = f->pause_max_us;
		a->pause_at = id;
	}
}

uint64_t ring_advice_step_up(uint64_t ms)
{
	static const uint64_t steps[] = {1, 2, 5};
	for (uint64_t decade = 1;; decade *= 10) {
		for (size_t k = 0; k < 3; k++)
			if (steps[k] * decade >= ms)
				return steps[k] * decade;
		if (decade > UINT64_MAX / 100)
			return UINT64_MAX;
	}
}

static uint32_t capped_at(struct ring_advice *a, uint64_t ms, uint32_t bound)
{
	if (ms <= bound)
		return (uint32_t)ms;
	a->capped = true;
	return bound;
}

/* The rule: a lease must outlast the longest stall a member was seen to
 * suffer, three times over (a pause is rarely the longest there will be),
 * and the holds clients really make, with half again for the tail; the
 * bound on a renewed hold, twice the longest hold seen. */
void ring_advice_decide(struct ring_advice *a)
{
	a->enough = a->holds >= RING_ADVICE_MIN_HOLDS;
	if (!a->enough)
		return;
	a->by_pause_ms = scaled_ms(a->pause_us, 3, 1);
	a->by_hold_ms = scaled_ms(a->p999_us, 3, 2);
	a->by_max_ms = scaled_ms(a->max_us, 2, 1);
	uint64_t floor = a->by_pause_ms > a->by_hold_ms ? a->by_pause_ms : a->by_hold_ms;
	a->lease_ms = capped_at(a, ring_advice_step_up(floor), RING_ADVICE_LEASE_MAX_MS);
	uint64_t hold = ring_advice_step_up(a->by_max_ms);
	if (hold < a->lease_ms)
		hold = a->lease_ms; /* conf.c: max_hold_ms is 0 or >= lease_ms */
	a->max_hold_ms = capped_at(a, hold, RING_ADVICE_MAX_HOLD_MAX_MS);
	a->max_hold_optional = a->max_us <= (uint64_t)a->lease_ms * 1000u;
}

/* ---- the reasoning ---- */

struct out {
	char *buf;
	size_t len, need;
};

__attribute__((format(printf, 2, 3)))
static void add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = o->need < o->len ? o->len - o->need : 0;
	int n = vsnprintf(room ? o->buf + o->need : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->need += (size_t)n;
}

/* Microseconds as milliseconds with one decimal: "52.3 ms". */
static void add_ms(struct out *o, uint64_t us)
{
	add(o, "%llu.%llu ms", (unsigned long long)(us / 1000u),
	    (unsigned long long)(us % 1000u / 100u));
}

static void add_at(struct out *o, const char *what, uint64_t us, uint16_t at)
{
	add(o, "%s (", what);
	add_ms(o, us);
	if (at)
		add(o, " at member %u", at);
	add(o, ")");
}

static void explain_lease(struct out *o, const struct ring_advice *a, uint32_t now)
{
	add(o, "lease_ms >= %u: 3 x the longest pause", a->lease_ms);
	if (a->pause_us)
		add_at(o, "", a->pause_us, a->pause_at);
	else
		add(o, " (none detected)");
	add(o, " = %llu ms, %s ", (unsigned long long)a->by_pause_ms,
	    a->by_pause_ms >= a->by_hold_ms ? "above" : "below");
	add_at(o, "1.5 x the highest p99.9 hold", a->p999_us, a->p999_at);
	add(o, " = %llu ms; the larger, rounded up to a 1-2-5 step", (unsigned long long)a->by_hold_ms);
	add(o, "; now %u: %s\n", now, now >= a->lease_ms ? "long enough" : "too short");
}

static void explain_max_hold(struct out *o, const struct ring_advice *a, uint32_t now)
{
	add(o, "max_hold_ms >= %u: 2 x the longest hold", a->max_hold_ms);
	add_at(o, "", a->max_us, a->max_at);
	add(o, " = %llu ms, rounded up to a 1-2-5 step and not below lease_ms",
	    (unsigned long long)a->by_max_ms);
	if (a->max_hold_optional)
		add(o, "; or 0 (none): every hold so far ended within one lease");
	if (now == 0)
		add(o, "; now 0 (none)%s\n", a->max_hold_optional ? ": fine" : ": holds are unbounded");
	else
		add(o, "; now %u: %s\n", now, now >= a->max_hold_ms ? "long enough" : "too short");
}

int ring_advice_explain(const struct ring_advice *a, uint32_t lease_now, uint32_t max_hold_now,
			char *buf, size_t len)
{
	struct out o = {.buf = buf, .len = len, .need = 0};
	if (len > 0)
		buf[0] = '\0';
	if (!a->enough) {
		add(&o, "lease_ms: not enough data: %llu holds in all, the advice needs %u\n",
		    (unsigned long long)a->holds, RING_ADVICE_MIN_HOLDS);
		add(&o, "max_hold_ms: not enough data: %llu holds in all, the advice needs %u\n",
		    (unsigned long long)a->holds, RING_ADVICE_MIN_HOLDS);
	} else {
		explain_lease(&o, a, lease_now);
		explain_max_hold(&o, a, max_hold_now);
		if (a->capped)
			add(&o, "(capped at the keys' bounds, lease_ms %u and max_hold_ms %u: the figures "
				"are beyond what a lease can cover)\n",
			    RING_ADVICE_LEASE_MAX_MS, RING_ADVICE_MAX_HOLD_MAX_MS);
	}
	return o.need > (size_t)INT32_MAX ? INT32_MAX : (int)o.need;
}
