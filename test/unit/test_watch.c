/* CUnit suite for watch's pure view (ring/ctl/watch.c): rates between rounds,
 * a silent member down at once, a restarted member marked instead of
 * negative rates, where the token is and whether parked, and the two
 * renderings (a screen cut to the terminal, one line per round). */
#include <CUnit/CUnit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/node.h"
#include "lib/suites.h"
#include "ctl/watch.h"

static struct ring_layout layout;
static struct ring_watch w; /* large: not on the stack */
static struct ring_msg_status_resp resp[RING_MAX_MEMBERS];
static const struct ring_msg_status_resp *ans[RING_MAX_MEMBERS];
static char text[1 << 16];

/* A ring of N members with ids 10, 20, ..., everyone answering idle with
 * no counters, no round fed yet. */
static void setup(size_t n)
{
	ring_layout_defaults(&layout);
	snprintf(layout.name, sizeof layout.name, "wt");
	layout.n = n;
	for (size_t i = 0; i < n; i++) {
		layout.members[i].id = (uint16_t)(10 * (i + 1));
		snprintf(layout.members[i].host, sizeof layout.members[i].host, "127.0.0.1");
		layout.members[i].port = (uint16_t)(7000 + i);
	}
	memset(resp, 0, sizeof resp);
	for (size_t i = 0; i < n; i++) {
		resp[i].state = RING_STATE_IDLE;
		resp[i].epoch = 7;
		ans[i] = &resp[i];
	}
	ring_watch_init(&w, &layout);
}

static const char *render(enum ring_watch_form f, unsigned cols, unsigned rows)
{
	int need = ring_watch_render(&w, f, cols, rows, "T", text, sizeof text);
	CU_ASSERT(need > 0 && (size_t)need < sizeof text);
	CU_ASSERT_EQUAL(strlen(text), (size_t)need);
	return text;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_rates_are_counters_over_the_time_between_answers(void)
{
	setup(3);
	resp[0].counters.cs_entries = 10;
	resp[0].counters.tokens_passed = 100;
	ring_watch_update(&w, ans, 1000000);
	CU_ASSERT_FALSE(w.m[0].rated); /* one answer is no rate yet */
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "| 10 idle epoch=7 fence=0:0 queue=0 grants/s=- hops/s=-"));
	resp[0].counters.cs_entries = 15;     /* +5 in 0.5 s */
	resp[0].counters.tokens_passed = 200; /* +100 in 0.5 s */
	resp[1].counters.tokens_passed = 50;  /* +50 */
	ring_watch_update(&w, ans, 1500000);
	CU_ASSERT_TRUE(w.m[0].rated);
	CU_ASSERT_DOUBLE_EQUAL(w.m[0].grants_s, 10.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(w.m[0].hops_s, 200.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(w.m[1].hops_s, 100.0, 1e-9);
	double g, h;
	ring_watch_rates(&w, &g, &h);
	CU_ASSERT_DOUBLE_EQUAL(g, 10.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(h, 300.0, 1e-9);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "up=3/3 token=- parked=- lock=? grants/s=10.0 hops/s=300.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "| 10 idle epoch=7 fence=0:0 queue=0 grants/s=10.0 hops/s=200.0"));
	/* The rate is over the time between the two answers, not per round. */
	resp[0].counters.cs_entries = 35; /* +20 in 2 s */
	ring_watch_update(&w, ans, 3500000);
	CU_ASSERT_DOUBLE_EQUAL(w.m[0].grants_s, 10.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(w.m[0].hops_s, 0.0, 1e-9);
}

static void test_a_silent_member_is_down_at_once_and_back_when_it_answers(void)
{
	setup(3);
	ring_watch_update(&w, ans, 1000000);
	CU_ASSERT_EQUAL(ring_watch_up(&w), 3);
	resp[1].counters.tokens_passed = 40;
	ans[1] = NULL; /* member 20 is silent in the next round */
	ring_watch_update(&w, ans, 1500000);
	CU_ASSERT_FALSE(w.m[1].up);
	CU_ASSERT_FALSE(w.m[1].rated);
	CU_ASSERT_EQUAL(ring_watch_up(&w), 2);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "up=2/3"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "| 20 down | 30 idle"));
	ring_watch_update(&w, ans, 2500000);
	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n  20 down"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "silent for 1.0 s")); /* since its first silent round */
	ans[1] = &resp[1]; /* back, counters higher: a pause, not a restart */
	ring_watch_update(&w, ans, 3000000);
	CU_ASSERT_TRUE(w.m[1].up);
	CU_ASSERT_EQUAL(w.m[1].restarts, 0);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "| 20 idle"));
	CU_ASSERT_PTR_NULL(strstr(text, "restarted"));
	/* A member that never answered says so. */
	setup(2);
	ans[0] = NULL;
	ring_watch_update(&w, ans, 1000000);
	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "never answered"));
}

static void test_a_restarted_member_is_marked_for_five_seconds_not_given_negative_rates(void)
{
	setup(2);
	resp[0].counters.cs_entries = 500;
	resp[0].counters.tokens_passed = 9000;
	resp[0].counters.elections = 3;
	ring_watch_update(&w, ans, 1000000);
	ring_watch_update(&w, ans, 1500000);
	CU_ASSERT_TRUE(w.m[0].rated);
	/* A new process: its counters start again from nothing. Only one of
	 * them going down is enough. */
	resp[0].counters.cs_entries = 500;
	resp[0].counters.tokens_passed = 9100;
	resp[0].counters.elections = 0;
	ring_watch_update(&w, ans, 2000000);
	CU_ASSERT_FALSE(w.m[0].rated);
	CU_ASSERT_EQUAL(w.m[0].restarts, 1);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "| 10 idle epoch=7 fence=0:0 queue=0 grants/s=- hops/s=- "
					    "retransmits=0 skips=0 elections=0 restarted |"));
	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "restarted"));
	/* Rates again from the next answer on, the mark until 5 s have passed. */
	resp[0].counters.tokens_passed = 9150;
	ring_watch_update(&w, ans, 2500000);
	CU_ASSERT_TRUE(w.m[0].rated);
	CU_ASSERT_DOUBLE_EQUAL(w.m[0].hops_s, 100.0, 1e-9);
	ring_watch_update(&w, ans, 6900000);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_LINE, 0, 0), "restarted"));
	ring_watch_update(&w, ans, 7000000);
	CU_ASSERT_PTR_NULL(strstr(render(RING_WATCH_LINE, 0, 0), "restarted"));
}

static void test_the_token_and_whether_it_is_parked(void)
{
	setup(4);
	resp[2].flags = RING_STATUS_HAS_TOKEN;
	resp[2].state = RING_STATE_HOLDING;
	ring_watch_update(&w, ans, 1000000);
	struct ring_watch_token t;
	ring_watch_token(&w, &t);
	CU_ASSERT_EQUAL(t.holders, 1);
	CU_ASSERT_EQUAL(t.index, 2);
	CU_ASSERT_FALSE(t.parked);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_LINE, 0, 0), " token=30 parked=no "));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "| 30 holding token=here epoch=7"));
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 0, 0), "  token at 30\n"));

	resp[2].flags = RING_STATUS_HAS_TOKEN | RING_STATUS_PARKED;
	ring_watch_update(&w, ans, 1500000);
	ring_watch_token(&w, &t);
	CU_ASSERT_TRUE(t.parked);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_LINE, 0, 0), " token=30 parked=yes "));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "| 30 holding token=parked epoch=7"));
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 0, 0), "  token parked at 30\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n  30 holding   parked"));

	/* A holder that stops answering no longer shows the token. */
	ans[2] = NULL;
	ring_watch_update(&w, ans, 2000000);
	ring_watch_token(&w, &t);
	CU_ASSERT_EQUAL(t.holders, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_LINE, 0, 0), " token=- parked=- "));
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 0, 0), "  no token seen\n"));

	/* Two members that say they have it (a fault, or a view across a
	 * hop): both are named. */
	ans[2] = &resp[2];
	resp[0].flags = RING_STATUS_HAS_TOKEN;
	ring_watch_update(&w, ans, 2500000);
	ring_watch_token(&w, &t);
	CU_ASSERT_EQUAL(t.holders, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_LINE, 0, 0), " token=10,30 parked=no "));
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 0, 0), "token at 10,30 (2 members say"));
}

static struct ring_msg_hold_resp hold[RING_MAX_MEMBERS];
static const struct ring_msg_hold_resp *hans[RING_MAX_MEMBERS];

/* Every member of the last setup() answers the hold request: nobody in
 * the region. */
static void holds_free(void)
{
	memset(hold, 0, sizeof hold);
	for (size_t i = 0; i < layout.n; i++)
		hans[i] = &hold[i];
}

/* Who holds the lock: the member whose client is in the region, since
 * when and under which fence, on the screen's second line and in the
 * plain line's head; "free" once it is released; "?" when nobody says
 * (a round without hold answers, members older than HOLD_REQ). */
static void test_the_lock_names_the_member_in_the_region_and_for_how_long(void)
{
	setup(4);
	resp[2].flags = RING_STATUS_HAS_TOKEN;
	resp[2].state = RING_STATE_HOLDING;
	ring_watch_update(&w, ans, 1000000);
	holds_free();
	hold[2] = (struct ring_msg_hold_resp){.fence = (uint64_t)7 << 32 | 12, .held_ms = 2400};
	ring_watch_holds(&w, hans);
	struct ring_watch_lock lk;
	ring_watch_lock(&w, &lk);
	CU_ASSERT_EQUAL(lk.holders, 1);
	CU_ASSERT_EQUAL(lk.index, 2);
	CU_ASSERT_EQUAL(lk.held_ms, 2400);
	CU_ASSERT_EQUAL(lk.unknown, 0);
	render(RING_WATCH_SCREEN, 79, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nlock held at member 30 for 2.4 s (fence 7:12)  token at 30\n"));
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " token=30 parked=no lock=30 held_ms=2400 lock_fence=7:12 grants/s="));
	/* Longer: whole seconds past 100 s. */
	hold[2].held_ms = 123456;
	ring_watch_holds(&w, hans);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 79, 0), "member 30 for 123 s (fence"));

	/* Released: free. */
	ring_watch_update(&w, ans, 1500000);
	holds_free();
	ring_watch_holds(&w, hans);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 79, 0), "\nlock free  token at 30\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_LINE, 0, 0), " parked=no lock=free grants/s="));

	/* A round without hold answers says nothing of the lock, not the
	 * last round's. */
	hold[2] = (struct ring_msg_hold_resp){.fence = (uint64_t)7 << 32 | 13, .held_ms = 5};
	ring_watch_holds(&w, hans);
	ring_watch_update(&w, ans, 2000000);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 79, 0), "\nlock ?  token at 30\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_LINE, 0, 0), " lock=? "));
	/* Some members do not say (older ringd), the others say free. */
	holds_free();
	hans[0] = hans[1] = NULL;
	ring_watch_holds(&w, hans);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 0, 0), "\nlock free (2 up do not say"));

	/* Two members with a client in the region (a fault): both named. A
	 * member that is down is not believed, even with an answer. */
	holds_free();
	hold[0] = (struct ring_msg_hold_resp){.fence = (uint64_t)8 << 32 | 1, .held_ms = 1};
	hold[2] = (struct ring_msg_hold_resp){.fence = (uint64_t)7 << 32 | 12, .held_ms = 9};
	hold[3] = (struct ring_msg_hold_resp){.fence = (uint64_t)9 << 32 | 1, .held_ms = 1};
	ans[3] = NULL;
	ring_watch_update(&w, ans, 2500000);
	ring_watch_holds(&w, hans);
	ring_watch_lock(&w, &lk);
	CU_ASSERT_EQUAL(lk.holders, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_SCREEN, 0, 0),
				      "\nlock held at members 10,30 (2 members say a client"));
	CU_ASSERT_PTR_NOT_NULL(strstr(render(RING_WATCH_LINE, 0, 0), " lock=10,30 held_ms=1 lock_fence=8:1 "));
}

/* Issue 30: on an 80-column terminal (79 drawn, watch_loop.c) the title
 * was cut in the middle of its rates. Its figures now stay whole whatever
 * they are; a long ring name gives way, cut with "...". */
static void test_the_title_keeps_its_figures_in_80_columns_whatever_the_numbers(void)
{
	setup(5);
	snprintf(layout.name, sizeof layout.name, "demo");
	resp[3].flags = RING_STATUS_HAS_TOKEN | RING_STATUS_PARKED;
	w.authenticated = true;
	ring_watch_update(&w, ans, 1000000);
	resp[3].counters.tokens_passed = 6;
	ring_watch_update(&w, ans, 2000000);
	ring_watch_render(&w, RING_WATCH_SCREEN, 79, 24, "14:02:07", text, sizeof text);
	static const char want[] = "ring \"demo\" (keyed)  14:02:07  5/5 up  0.0 grants/s  6.0 hops/s\n";
	CU_ASSERT_EQUAL(strncmp(text, want, sizeof want - 1), 0);

	/* The longest name, 256 members and rates past a million a second. */
	setup(256);
	memset(layout.name, 'n', RING_NAME_MAX - 1);
	layout.name[RING_NAME_MAX - 1] = '\0';
	w.authenticated = false;
	ring_watch_update(&w, ans, 1000000);
	for (size_t i = 0; i < 256; i++) {
		resp[i].counters.cs_entries = 5000000;
		resp[i].counters.tokens_passed = 900000000;
	}
	ring_watch_update(&w, ans, 2000000);
	for (unsigned cols = 79; cols >= 70; cols -= 9) {
		ring_watch_render(&w, RING_WATCH_SCREEN, cols, 24, "23:59:59", text, sizeof text);
		const char *nl = strchr(text, '\n');
		CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
		CU_ASSERT((size_t)(nl - text) <= cols);
		CU_ASSERT_EQUAL(strncmp(text, "ring \"nnn", 9), 0);
		static const char tail[] = "...\" (no key)  23:59:59  256/256 up  >1G grants/s  >1G hops/s";
		CU_ASSERT((size_t)(nl - text) > sizeof tail - 1);
		CU_ASSERT_EQUAL(strncmp(nl - (sizeof tail - 1), tail, sizeof tail - 1), 0);
	}
	/* No limit: the whole name. */
	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, layout.name));
}

static void test_plain_is_one_line_per_round_and_the_screen_a_line_per_member(void)
{
	setup(5);
	resp[0].fence = ((uint64_t)7 << 32) | 12;
	resp[0].queued = 2;
	resp[0].counters.retransmits = 4;
	resp[0].counters.skips = 5;
	resp[0].counters.elections = 6;
	ring_watch_update(&w, ans, 1000000);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_EQUAL(count_lines(text), 1);
	CU_ASSERT_EQUAL(text[strlen(text) - 1], '\n');
	CU_ASSERT_EQUAL(strncmp(text, "T ring=wt auth=off up=5/5 ", 26), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "| 10 idle epoch=7 fence=7:12 queue=2 grants/s=- hops/s=- "
					    "retransmits=4 skips=5 elections=6 |"));
	CU_ASSERT_PTR_NULL(strchr(text, '\033')); /* no escapes: the terminal is watch_loop's */

	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_EQUAL(count_lines(text), 3 + 5); /* title, lock and token, header, members */
	CU_ASSERT_EQUAL(strncmp(text, "ring \"wt\" (no key)  T  5/5 up  ", 31), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n  id state     token"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n  10 idle                  7        7:12   2        -       -    4     5     6\n"));
	CU_ASSERT_PTR_NULL(strchr(text, '\033'));
	CU_ASSERT_PTR_NULL(strstr(text, " \n")); /* no trailing blanks */
	for (const char *p = text; *p;) { /* everyday numbers fit an 80-column terminal */
		const char *nl = strchr(p, '\n');
		CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
		CU_ASSERT((size_t)(nl - p) < 80);
		p = nl + 1;
	}
}

/* Advice answers give both forms the ring's lease advice: the screen a
 * footer line, the plain line a last field; with too few holds, says so. */
static void test_advice_is_a_footer_and_the_end_of_the_line(void)
{
	setup(3);
	ring_watch_update(&w, ans, 1000000);
	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_EQUAL(count_lines(text), 3 + 3); /* no advice asked yet: no footer */
	static struct ring_msg_advice_resp adv[3];
	const struct ring_msg_advice_resp *aans[3] = {&adv[0], NULL, &adv[2]};
	adv[0] = (struct ring_msg_advice_resp){.holds = 5, .max_us = 9};
	adv[2] = (struct ring_msg_advice_resp){.holds = 5, .max_us = 9};
	ring_watch_advice(&w, aans);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " | advice not-enough-data holds=10\n"));
	adv[2] = (struct ring_msg_advice_resp){.holds = 40, .p50_us = 50000, .p99_us = 52000,
					       .p999_us = 53000, .max_us = 60000,
					       .pause_max_us = 499000, .pauses = 1};
	ring_watch_advice(&w, aans);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " | advice lease_ms=2000 max_hold_ms=2000 holds=45 "
					    "pause_max_ms=499\n"));
	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_EQUAL(count_lines(text), 3 + 3 + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nlease advice: lease_ms >= 2000, max_hold_ms >= 2000 or 0 "
					    "(45 holds, longest pause 499 ms"));
	/* A round without advice answers keeps the last advice. */
	const struct ring_msg_advice_resp *none[3] = {NULL, NULL, NULL};
	ring_watch_advice(&w, none);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " | advice lease_ms=2000 "));
	/* No room left on the screen: no footer. */
	render(RING_WATCH_SCREEN, 0, 5);
	CU_ASSERT_EQUAL(count_lines(text), 5);
}

static void test_both_forms_say_whether_the_ring_is_authenticated(void)
{
	setup(3);
	ring_watch_update(&w, ans, 1000000);
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "T ring=wt auth=off up=3/3 "));
	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "ring \"wt\" (no key)  T  "));
	w.authenticated = true;
	render(RING_WATCH_LINE, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "T ring=wt auth=on up=3/3 "));
	render(RING_WATCH_SCREEN, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "ring \"wt\" (keyed)  T  "));
}

static void test_the_screen_fits_the_terminal(void)
{
	setup(10);
	ring_watch_update(&w, ans, 1000000);
	/* Cut to 40 columns: every line at most 40 characters. */
	render(RING_WATCH_SCREEN, 40, 0);
	CU_ASSERT_EQUAL(count_lines(text), 13);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
		CU_ASSERT((size_t)(nl - p) <= 40);
		p = nl + 1;
	}
	/* 8 rows for 10 members: title, lock and token, header, 4 members,
	 * and a line that says what is left out. */
	ans[9] = NULL;
	ring_watch_update(&w, ans, 1500000);
	render(RING_WATCH_SCREEN, 0, 8);
	CU_ASSERT_EQUAL(count_lines(text), 8);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n  40 idle"));
	CU_ASSERT_PTR_NULL(strstr(text, "\n  50 idle"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "... 6 more members (1 down)"));
	/* Room for all: no such line. */
	render(RING_WATCH_SCREEN, 0, 13);
	CU_ASSERT_EQUAL(count_lines(text), 13);
	CU_ASSERT_PTR_NULL(strstr(text, "more members"));
}

static void test_render_into_a_small_buffer_is_cut_safely_and_says_what_it_needs(void)
{
	setup(256);
	for (size_t i = 0; i < 256; i++) {
		memset(&resp[i].counters, 0xff, sizeof resp[i].counters);
		resp[i].fence = UINT64_MAX;
		resp[i].epoch = UINT32_MAX;
		resp[i].queued = UINT32_MAX;
		resp[i].flags = RING_STATUS_HAS_TOKEN | RING_STATUS_PARKED;
	}
	ring_watch_update(&w, ans, 1000000);
	for (int f = 0; f < 2; f++) {
		enum ring_watch_form form = f ? RING_WATCH_SCREEN : RING_WATCH_LINE;
		int need = ring_watch_render(&w, form, 0, 0, "T", text, sizeof text);
		CU_ASSERT(need > 0 && (size_t)need < sizeof text);
		char *big = strdup(text);
		char small[120];
		memset(small, 'x', sizeof small);
		CU_ASSERT_EQUAL(ring_watch_render(&w, form, 0, 0, "T", small, 100), need);
		CU_ASSERT_EQUAL(small[99], '\0');
		CU_ASSERT_EQUAL(small[100], 'x');
		CU_ASSERT_EQUAL(memcmp(small, big, 99), 0);
		CU_ASSERT_EQUAL(ring_watch_render(&w, form, 0, 0, "T", NULL, 0), need);
		free(big);
	}
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_watch_tests[] = {
	T_(test_rates_are_counters_over_the_time_between_answers),
	T_(test_a_silent_member_is_down_at_once_and_back_when_it_answers),
	T_(test_a_restarted_member_is_marked_for_five_seconds_not_given_negative_rates),
	T_(test_the_token_and_whether_it_is_parked),
	T_(test_the_lock_names_the_member_in_the_region_and_for_how_long),
	T_(test_the_title_keeps_its_figures_in_80_columns_whatever_the_numbers),
	T_(test_plain_is_one_line_per_round_and_the_screen_a_line_per_member),
	T_(test_advice_is_a_footer_and_the_end_of_the_line),
	T_(test_both_forms_say_whether_the_ring_is_authenticated),
	T_(test_the_screen_fits_the_terminal),
	T_(test_render_into_a_small_buffer_is_cut_safely_and_says_what_it_needs),
	CU_TEST_INFO_NULL,
};
#undef T_
