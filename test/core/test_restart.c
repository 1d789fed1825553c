/* CUnit suite: the histories of issue 26's hostile review of the epoch
 * answers (PROTOCOL.md §4.2, §5.3): a forged EPOCH_REPLY with the real
 * nonce (it travels in clear), and one member's wild epoch file. Each must
 * cost at most one jump of the epoch, never the ring. */
#include <CUnit/CUnit.h>

#include <string.h>

#include "lib/harness.h"
#include "lib/suites.h"

#define GEN_JUMP 0x10000u /* ring/core/node.c's RING_GEN_JUMP */
#define WILD 0xffffff00u  /* the last generation: one mint and it is FATAL */

static void inject_reply(struct sim *s, size_t i, size_t from, uint64_t nonce, uint32_t epoch)
{
	struct ring_msg m = {.type = RING_MSG_EPOCH_REPLY};
	m.u.epoch_reply.nonce = nonce;
	m.u.epoch_reply.epoch = epoch;
	sim_inject(s, i, from, m);
}

/* A stranger bound to member FORGED's port (it is down): it answers every
 * EPOCH_QUERY it sees with the query's own nonce and EPOCH. */
struct forger {
	size_t forged;
	uint32_t epoch;
	size_t cursor[SIM_MAX];
	size_t answered;
};

static void forger_answer(struct sim *s, struct forger *f)
{
	for (size_t i = 0; i < s->n; i++) {
		for (; f->cursor[i] < s->n_rec[i]; f->cursor[i]++) {
			struct ring_msg q;
			const struct ring_action *a = &s->rec[i][f->cursor[i]].a;
			if (i == f->forged || !decode_send(a, &q) || q.type != RING_MSG_EPOCH_QUERY ||
			    (a->u.send.to != 0 && a->u.send.to != id_of(f->forged)))
				continue;
			if (!s->up[i])
				continue;
			f->answered++;
			inject_reply(s, i, f->forged, q.u.epoch_query.nonce, f->epoch);
		}
	}
}

static void forger_init(const struct sim *s, struct forger *f, size_t forged, uint32_t epoch)
{
	memset(f, 0, sizeof *f);
	f->forged = forged;
	f->epoch = epoch;
	for (size_t i = 0; i < s->n; i++)
		f->cursor[i] = s->n_rec[i];
}

/* Runs the ring for DUR with the forger answering. */
static void run_forged(struct sim *s, struct forger *f, uint64_t dur)
{
	uint64_t until = s->now + dur;
	for (size_t k = 0; k < RUN_STEPS_MAX; k++) {
		forger_answer(s, f);
		s->last_node = -1;
		if (!sim_next(s, until))
			return;
	}
	CU_FAIL("run_forged: too many steps");
}

static bool within_jump(uint32_t base, uint32_t e)
{
	return (e >> 8) <= (base >> 8) + GEN_JUMP;
}

/* ---- one forged answer ---- */

/* §5.3: a member that restarts with a stored epoch needs n/2 answers, one
 * of three. The forged one comes first, with the real nonce and the last
 * generation: it is beyond reach and no second member vouches for it, so
 * it counts for nothing; the honest answer proves the member. Before
 * issue 26 the member adopted and persisted 0xffffff.., and its first mint
 * was epoch_exhausted. */
static void test_a_forged_answer_beyond_reach_does_not_prove_a_restart(void)
{
	struct ring_layout l;
	make_short_lease_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	(void)sim_settle(s);
	size_t r = 0, a = 1, forged = 2;
	uint32_t stored = status_of(s, r).epoch;
	sim_restart(s, r, stored);
	s->up[a] = false; /* A answers by hand, after the forger */
	sim_start(s, r);
	struct ring_msg q;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_EPOCH_QUERY, 0, &q) >= 0);
	uint64_t mark = s->seq;
	inject_reply(s, r, forged, q.u.epoch_query.nonce, WILD | (uint32_t)forged);
	CU_ASSERT_EQUAL(count_logs(s, r, mark, RING_LOG_EPOCH_LEARNED), 0);
	CU_ASSERT_EQUAL(status_of(s, r).epoch, stored);
	inject_reply(s, r, a, q.u.epoch_query.nonce, stored);
	CU_ASSERT_EQUAL(count_logs(s, r, mark, RING_LOG_EPOCH_LEARNED), 1);
	CU_ASSERT_EQUAL(status_of(s, r).epoch, stored);
	CU_ASSERT(count_logs(s, r, mark, RING_LOG_BAD_PACKET) >= 1); /* counted */
	sim_free(s);
}

/* §4.2 and §5.3, the history the review played on real daemons: a whole
 * ring restarts (an upgrade) with member 3 still down, and a stranger on
 * member 3's port answers every EPOCH_QUERY of every member with the real
 * nonce and the last generation. The ring must come back and grant, every
 * epoch within one jump of where it was, no member broken; and so once
 * member 3 is back. Before issue 26 every member took 0xffffff.. and the
 * ring never granted again. */
static void test_a_forger_answering_every_query_at_a_whole_ring_restart_costs_nothing(void)
{
	struct ring_layout l;
	make_short_lease_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	(void)sim_settle(s);
	uint32_t before = 0;
	for (size_t i = 0; i < s->n; i++)
		before = status_of(s, i).epoch > before ? status_of(s, i).epoch : before;
	size_t forged = 2;
	uint32_t stored[3];
	for (size_t i = 0; i < 3; i++)
		stored[i] = status_of(s, i).epoch;
	for (size_t i = 0; i < 3; i++)
		sim_restart(s, i, stored[i]);
	s->up[forged] = false;
	struct forger f;
	forger_init(s, &f, forged, WILD | (uint32_t)forged);
	sim_start(s, 0);
	run_forged(s, &f, 300 * MS); /* member 1 alone, its query answered by the forger only */
	sim_start(s, 1);
	run_forged(s, &f, 3000 * MS);
	uint64_t mark = s->seq;
	sim_acquire_everywhere(s, 10);
	run_forged(s, &f, 2000 * MS);
	CU_ASSERT(f.answered >= 2);
	CU_ASSERT(count_grants_all(s, mark) >= 2);
	s->up[forged] = true; /* member 3 back; the stranger now lies as member 2, */
	sim_start(s, forged);  /* beside member 2's own answers */
	f.forged = 1;
	run_forged(s, &f, 3000 * MS);
	mark = s->seq;
	sim_acquire_everywhere(s, 20);
	run_forged(s, &f, 3000 * MS);
	CU_ASSERT(count_actions(s, forged, mark, RING_ACTION_GRANT) >= 1);
	for (size_t i = 0; i < 3; i++) {
		CU_ASSERT(!s->broken[i]);
		CU_ASSERT(within_jump(before, status_of(s, i).epoch));
	}
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_EPOCH_EXHAUSTED), 0);
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3, the floor: an answer of this life forged for member P before P's
 * own arrives sets P's floor. Beyond reach it sets none; within reach, the
 * refusal it causes names it, so P's take-back mints above it at once: one
 * take-back, not one per generation. Before issue 26 a floor of the last
 * generation made the victim refuse P's tokens for good and P take back
 * for ever (1360 take-backs in 30 s on real daemons). */
static void test_a_forged_floor_costs_one_take_back_at_most(void)
{
	for (int k = 0; k < 2; k++) {
		struct ring_layout l;
		make_short_lease_layout(&l, 3);
		struct sim *s = sim_new(&l);
		sim_boot(s);
		(void)sim_settle(s);
		size_t v = 0, p = 2; /* P precedes V in ring order */
		CU_ASSERT_FATAL(successor_of(s, p) == v);
		uint32_t stored = status_of(s, v).epoch;
		sim_restart(s, v, stored);
		s->up[p] = false; /* V is proven by member 2 alone */
		sim_start(s, v);
		struct ring_msg q;
		CU_ASSERT_FATAL(last_send(s, RING_MSG_EPOCH_QUERY, 0, &q) >= 0);
		CU_ASSERT_FATAL(run_until_log(s, (int)v, RING_LOG_EPOCH_LEARNED, 500 * MS));
		uint32_t forged = k == 0 ? WILD : stored + (GEN_JUMP / 2 << 8);
		uint64_t mark = s->seq;
		inject_reply(s, v, p, q.u.epoch_query.nonce, forged); /* before P's own */
		s->up[p] = true;
		sim_run_for(s, 2000 * MS);
		sim_acquire_everywhere(s, 30);
		sim_run_for(s, 3000 * MS);
		CU_ASSERT(count_logs(s, p, mark, RING_LOG_MEMBER_REJOIN) <= 2);
		CU_ASSERT(count_actions(s, v, mark, RING_ACTION_GRANT) >= 1);
		CU_ASSERT(within_jump(stored, status_of(s, v).epoch));
		CU_ASSERT(!s->broken[v] && !s->broken[p]);
		assert_ring_safe(s);
		sim_free(s);
	}
}

/* §5.3, the same floor at a member still unproven, where no answer is
 * adopted yet: V restarts wiped with member 2 down, so it needs two
 * answers and has one, and a forged answer for P lands before P's own.
 * Every token P sends is at most that floor; only because V's refusal
 * names the floor does P's take-back mint above it at once. Without it P
 * takes back once per generation, for as long as V stays unproven. */
static void test_an_unproven_member_names_the_floor_it_refuses_by(void)
{
	struct ring_layout l;
	make_short_lease_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	(void)sim_settle(s);
	size_t v = 0, down = 1, p = 2;
	CU_ASSERT_FATAL(successor_of(s, p) == v);
	for (int k = 0; k < 100 && !status_of(s, p).token_held; k++)
		CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_RECV, 2000 * MS));
	CU_ASSERT_FATAL(status_of(s, p).token_held);
	uint32_t before = status_of(s, p).epoch;
	s->up[down] = false;
	sim_restart(s, v, 0);
	sim_start(s, v);
	struct ring_msg q;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_EPOCH_QUERY, 0, &q) >= 0);
	uint64_t mark = s->seq;
	inject_reply(s, v, p, q.u.epoch_query.nonce, before + (GEN_JUMP / 2 << 8));
	sim_run_for(s, 3000 * MS);
	CU_ASSERT_EQUAL(count_logs(s, v, mark, RING_LOG_EPOCH_LEARNED), 0); /* unproven throughout */
	CU_ASSERT(count_logs(s, p, mark, RING_LOG_MEMBER_REJOIN) <= 2);
	CU_ASSERT(count_logs(s, v, mark, RING_LOG_TOKEN_RECV) >= 1);
	CU_ASSERT(!s->broken[v] && !s->broken[p]);
	assert_ring_safe(s);
	sim_free(s);
}

/* ---- catching up, honestly ---- */

/* §5.3: a member that really fell behind (the ring minted more than 2^16
 * generations while it was down) catches up once two members answer
 * beyond its reach: two vouch for it. One alone would not do. */
static void test_a_member_far_behind_catches_up_once_two_answer(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 5);
	struct sim *s = sim_new(&l);
	s->up[1] = s->up[2] = s->up[3] = s->up[4] = false; /* scripted by hand */
	uint32_t stored = 0x500;
	sim_restart(s, 0, stored);
	sim_start(s, 0);
	struct ring_msg q;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_EPOCH_QUERY, 0, &q) >= 0);
	uint32_t far = (GEN_JUMP + 0x900) << 8;
	uint64_t mark = s->seq;
	inject_reply(s, 0, 1, q.u.epoch_query.nonce, far | 1);
	inject_reply(s, 0, 2, q.u.epoch_query.nonce, 0x480);
	CU_ASSERT_EQUAL(count_logs(s, 0, mark, RING_LOG_EPOCH_LEARNED), 0); /* n/2 = 2 within reach needed */
	CU_ASSERT_EQUAL(status_of(s, 0).epoch, stored);
	inject_reply(s, 0, 3, q.u.epoch_query.nonce, far | 3);
	CU_ASSERT_EQUAL(count_logs(s, 0, mark, RING_LOG_EPOCH_LEARNED), 1);
	CU_ASSERT_EQUAL(status_of(s, 0).epoch, far | 3);
	sim_free(s);
}

/* ---- one member's wild disk ---- */

/* §5.3: one member's epoch file is wild (a bad disk; a key does not help)
 * and the ring restarts. The file is not lowered (the distrust the hostile
 * review broke) and nobody takes it up: no epoch moves beyond a jump, no
 * member stops, and the member says so (epoch_out_of_reach). The ring may
 * wedge meanwhile (the member carries elections with an epoch nobody can
 * take; skipping it is unsafe, test_review_epochs3.c), so the operator
 * deletes the file, as operations.md says, and everyone is served again. */
static void test_one_wild_epoch_file_moves_nobody_and_is_deleted(void)
{
	struct ring_layout l;
	make_short_lease_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	(void)sim_settle(s);
	uint32_t before = status_of(s, 0).epoch;
	size_t w = 1;
	uint32_t stored[3];
	for (size_t i = 0; i < 3; i++)
		stored[i] = status_of(s, i).epoch;
	stored[w] = WILD | (uint32_t)w;
	for (size_t i = 0; i < 3; i++)
		sim_restart(s, i, stored[i]);
	for (size_t i = 0; i < 3; i++)
		sim_start(s, i);
	sim_run_for(s, 3000 * MS);
	uint64_t mark = s->seq;
	sim_acquire_everywhere(s, 40);
	sim_run_for(s, 6000 * MS);
	for (size_t i = 0; i < 3; i++) {
		CU_ASSERT(!s->broken[i]);
		if (i != w)
			CU_ASSERT(within_jump(before, status_of(s, i).epoch));
	}
	CU_ASSERT_EQUAL(status_of(s, w).epoch, stored[w]);
	CU_ASSERT_EQUAL(count_logs(s, w, 0, RING_LOG_EPOCH_OUT_OF_REACH), 1);
	sim_restart(s, w, 0); /* the operator deletes node-W.epoch */
	sim_start(s, w);
	sim_run_for(s, 3000 * MS);
	mark = s->seq;
	sim_acquire_everywhere(s, 50);
	sim_run_for(s, 6000 * MS);
	for (size_t i = 0; i < 3; i++) {
		CU_ASSERT(within_jump(before, status_of(s, i).epoch));
		CU_ASSERT(count_actions(s, i, mark, RING_ACTION_GRANT) >= 1);
	}
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_EPOCH_EXHAUSTED), 0);
	assert_ring_safe(s);
	sim_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_review_epochs_tests[] = {
	T_(test_one_wild_epoch_file_moves_nobody_and_is_deleted),
	T_(test_a_forged_answer_beyond_reach_does_not_prove_a_restart),
	T_(test_a_forger_answering_every_query_at_a_whole_ring_restart_costs_nothing),
	T_(test_a_forged_floor_costs_one_take_back_at_most),
	T_(test_an_unproven_member_names_the_floor_it_refuses_by),
	T_(test_a_member_far_behind_catches_up_once_two_answer),
	CU_TEST_INFO_NULL,
};
#undef T_
