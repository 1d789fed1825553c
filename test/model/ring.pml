/* The protocol of docs/PROTOCOL.md as a Promela model, checked by SPIN
 * (make model-check, make model; docs/model.md says what it abstracts).
 * Per-member state and messages: token hops with acks, retransmits, skips
 * and take-backs (§3.2), parking (§3.4), jumps to the token's want set,
 * summons and walks (§3.5), epochs minted, adopted and made stale (§4),
 * grants only under an epoch the token's knows set confirms (§4.4), joins,
 * leaves and restarts with the persisted epoch (§5.3, §5.4), elections that
 * read a majority's epochs and complete later (§6), quorum = majority or
 * none, and a network that loses, duplicates and reorders. Each name says
 * the core's (ring/core) function or field it stands for. */

#ifndef N
#define N 3              /* members */
#endif
#ifdef QUORUM_NONE
#define Q 1              /* quorum = none */
#else
#define Q (N / 2 + 1)    /* majority quorum (ring_layout_quorum) */
#endif
#ifndef PARK
#define PARK 1           /* idle_pass_ms = 0 (parking, §3.4); 0: a paced ring */
#endif
#ifndef MAXGEN
#define MAXGEN 3         /* epoch generations that may be minted (epoch_mint()) */
#endif
#ifndef MAXSEQ
#define MAXSEQ 6         /* hops per epoch (token.seq) */
#endif
#ifndef MAXCNT
#define MAXCNT 2         /* grants per epoch (token.counter) */
#endif
#ifndef RETRIES
#define RETRIES 1        /* layout.retries */
#endif
#ifndef LOSSES
#define LOSSES 0         /* datagrams the network may lose */
#endif
#ifndef DUPS
#define DUPS 1           /* datagrams it may duplicate */
#endif
#ifndef SWAPS
#define SWAPS 1          /* reorderings */
#endif
#ifndef CRASHES
#define CRASHES 1        /* crash-stops (each may restart) */
#endif
#ifndef LEAVES
#define LEAVES 0         /* graceful leaves (ringd stopped) */
#endif
#ifndef SUSPECTS
#define SUSPECTS 0       /* losses suspected while a token lives (a pause, lost heartbeats) */
#endif
#ifndef REQS
#define REQS 2           /* client requests (PARK: a grant needs one) */
#endif
#ifndef LAPS
#define LAPS 1           /* walks (§3.5): laps of a parked token, or started as a grant ends */
#endif
#ifndef QCAP
#define QCAP 6           /* datagrams a member's socket holds (a bound: see send()) */
#endif

#define NONE 0           /* enum token_phase */
#define HELD 1
#define PASSING 2
#define REFUSED_NONE 0   /* enum pass_refused */
#define REFUSED_JOIN 1
#define REFUSED_LEAVE 2

mtype = { TOKEN, ACK, HB, JOIN, LEAVE, WANT };
/* Every RING_MSG_* of ring/core/wire.h is either modelled (model: lines) or
 * named as not (not-modelled:, with docs/model.md saying why); run.sh fails
 * on one that is neither.
 * model: TOKEN TOKEN_ACK HEARTBEAT JOIN LEAVE WANT
 * not-modelled: ELECTION ELECTION_ACK STATUS_REQ STATUS_RESP EPOCH_QUERY EPOCH_REPLY
 * not-modelled: HEARTBEAT_ACK ADVICE_REQ ADVICE_RESP HOLD_REQ HOLD_RESP
 * And every PHASE_* of ring/core/internal.h's enum token_phase:
 * model-phase: NONE HELD PASSING
 *
 * And every field of struct ring_node, by the model's name for it, or as
 * not modelled and why (run.sh fails on a field that is neither):
 * field: epoch=ep start_epoch=start_e seen_epoch=seen_e seen_seq=seen_s
 * field: accepted=acc_e,acc_s leave_accepted=acc_e,acc_s phase=phase
 * field: token=te,ts,tc,ta,tw,tk,twl pass_to=pass_to retries_left=retries
 * field: pass_refused=refused refused_epoch=ref_ep visit_granted=vg visit_served=vs
 * field: parked=parked summoned=summoned summon_hop=sm_e,sm_s
 * field: granted=granted q_len=want join_until=jpend join_epoch=jmax
 * field: left_until=lpend elect_active=electing leaving=leaving left=gone
 * field: quorum=Q me=m
 * Time (the checker's bookkeeping decides when a timer may fire):
 * not-modelled: ack_deadline pass_sent hop_rtt_us hb_base hb_deadline resting
 * not-modelled: rest_deadline lease_deadline last_heard loss_deadline
 * not-modelled: heard_ever join_next summon_next summon_every arrived
 * not-modelled: armed_deadline quarantine_until leave_started leave_deadline
 * not-modelled: walk_base walk_ending
 * Laps and walks (a walk: LAPS of them, from a park or as a grant ends,
 * and one whenever the token's alive set holds a member down once the
 * environment is calm; a walk is always due some time in the core):
 * not-modelled: lap_epoch lap_counter arrived_plain
 * The idle count and the visit's wish for it only feed logs since jumps:
 * not-modelled: visit_wanted
 * Where a waiter believes the token is (the model's WANT goes to the
 * member that holds it, once per hop of the token, see SUMMON_DUE; the
 * core's first summons of a wait goes to every member, so the holder has
 * its own copy, which is what the model's one datagram stands for):
 * not-modelled: holder_known holder_at holder_hop want_seen summon_to
 * not-modelled: summoned_all
 * not-modelled: wants_heard wants_heard_until copies_heard copies_heard_until
 * Identity, clients, logs (one client at a time):
 * not-modelled: layout fingerprint id grant_client grant_fence last_fence
 * not-modelled: queue q_head counters broken started joins_this_step
 * not-modelled: alive_view no_quorum
 * Renewal and try-locks (a longer hold, and a refusal, of one client):
 * not-modelled: grant_started queue_try busy_elsewhere_until busy_hop busy_sent
 * not-modelled: beat beat_sent_at ack_at busy_from busy_beat
 * The election as messages (§6; here a read and a later regeneration):
 * not-modelled: elect_round elect_started participated_until best_initiator
 * not-modelled: handled_round handled_until fwd vote_out_until
 * not-modelled: vote_epoch vote_initiator
 * Epoch queries and floors (§5.3; no disk is lost here):
 * not-modelled: proven query_active query_at_start first_nonce query_nonce
 * not-modelled: query_next query_every replied reply_epoch floor_known floor_from
 * not-modelled: floor_next floor_every floor_asks floor_cursor floor_asked
 *
 * One queue per receiver: type, sender and five fields:
 *   TOKEN  epoch, seq, counter, alive | knows << 4, want | walk_left << 4
 *   ACK    epoch, seq, known epoch, STALE
 *   HB     epoch, -, -, alive
 *   JOIN   epoch, refused hop (epoch, seq)
 *   LEAVE  accepted hop (epoch, seq), refused hop (epoch, seq)
 *   WANT   epoch, seq of the hop it was sent for (the sender is the wanter) */
chan net[N] = [QCAP] of { mtype, byte, byte, byte, byte, byte, byte };

/* struct ring_node, one entry per member */
byte ep[N];       /* epoch: newest known, persisted before it is acted on */
byte start_e[N];  /* start_epoch: loaded at restart; its tokens are refused */
byte phase[N];
byte te[N], ts[N], tc[N], ta[N]; /* token: epoch, seq, counter, alive */
byte tw[N], tk[N], twl[N];   /* token: want, knows (sets), walk_left (§3.5, §4.4) */
byte pass_to[N], retries[N], refused[N], ref_ep[N];
byte seen_e[N], seen_s[N];   /* the highest hop accepted (§3.2) */
byte acc_e[N], acc_s[N];     /* accepted: the last hop taken, named by a LEAVE (§5.4) */
byte jpend[N], jmax[N];      /* join_until (as a set), the highest join_epoch */
byte lpend[N];               /* left_until (as a set) */
bool granted[N], up[N], leaving[N], gone[N];
bool vg[N], vs[N];           /* visit_granted, visit_served (a grant in this visit) */
bool want[N];                /* a client waits (q_len > 0) */
bool parked[N], summoned[N];
byte sm_e[N], sm_s[N];       /* summon_hop: the hop of the token last summoned */
bool electing[N];            /* elect_active */
byte el_max[N], el_parts[N]; /* what the election read: max_epoch, participants */

/* The checker's bookkeeping (simcheck.c's, in small) */
#define EPOCHS (4 * (MAXGEN + 2))
byte maxcnt[EPOCHS];   /* highest counter granted per epoch */
byte floor_e[EPOCHS];  /* highest epoch granted under when this one was minted */
byte granted_e;        /* highest epoch granted under so far */
byte in_cs;
byte ov[N];    /* fairness (I5): the members granted since N's bit entered the want set */
byte lost, dups, swaps, crashes, leaves, sus, reqs, laps;
bool faulty;   /* a datagram was lost or a live token suspected: I2's precondition is gone */
bool bounded;  /* a model bound (epochs, hops, grants) was reached: liveness is excused */
bool calm;     /* the environment is done: no more faults or requests */

#define GEN(e) ((e) >> 2)
#define BIT(i) (1 << (i))
#define ALIVE(s, i) (((s) >> (i)) & 1)
#define COUNT(s) (ALIVE(s, 0) + ALIVE(s, 1) + ALIVE(s, 2) + ALIVE(s, 3))
#define ALONE(m) ((ta[m] & ~BIT(m)) == 0)
#if defined(BUG_NO_CONFIRM)
#define CONFIRMED(m) (1)                /* planted: grants before a majority knows the epoch */
#elif defined(BUG_CONFIRM_SEQ)
#define CONFIRMED(m) (ts[m] + 1 >= Q)   /* planted: the rule before jumps, hops counted */
#else
#define CONFIRMED(m) (COUNT(tk[m]) >= Q) /* epoch_confirmed(): the knows set, §4.4 */
#endif
/* jump_others_want(): another member of the alive set waits */
#define OTHERS_WANT(m) ((tw[m] & ta[m] & ~BIT(m)) != 0)
#define GRANTABLE(m) (want[m] && CONFIRMED(m) && tc[m] < MAXCNT)
#define MAX(a, b) ((a) > (b) -> (a) : (b))

/* Sends never block (a step is atomic). A full queue is a bound of the
 * model, not a loss: counting it as one would end I2's precondition in
 * runs that lost nothing (the review of this model found that most of a
 * search ran so), so it fails the check and QCAP must be raised. */
inline send(sto, stt, sf, s1, s2, s3, s4, s5) {
	assert(nfull(net[sto]));   /* QCAP too small for this configuration */
	net[sto] ! stt, sf, s1, s2, s3, s4, s5
}

/* clients_revoke() */
inline revoke(rv) {
	if
	:: granted[rv] -> granted[rv] = 0; in_cs--
	:: else -> skip
	fi
}

/* The token is not here: what the core keeps of it is never read again
 * until a token arrives, so the model forgets it (fewer states, the same
 * behaviour). */
inline forget(fm) {
	phase[fm] = NONE;
	te[fm] = 0; ts[fm] = 0; tc[fm] = 0; ta[fm] = 0;
	tw[fm] = 0; tk[fm] = 0; twl[fm] = 0;
	pass_to[fm] = 0; retries[fm] = 0; refused[fm] = 0; ref_ep[fm] = 0;
	vg[fm] = 0; vs[fm] = 0; parked[fm] = 0; summoned[fm] = 0
}

/* epoch_drop_token() */
inline drop(dm) {
	revoke(dm);
	forget(dm)
}

/* epoch_adopt(): learn epoch E; a token older than it is dropped (§4.3) */
inline epoch_adopt(am, ae) {
	if
	:: ae > ep[am] ->
		assert(ae > ep[am]);   /* a member never adopts an older epoch */
		ep[am] = ae;
		if
		:: phase[am] != NONE && te[am] < ae -> drop(am)
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* next_in(): the next member of set S after M in ring order */
inline next_in(nm, nset, nnx) {
	nnx = (nm + 1) % N;
	do
	:: nnx != nm && !ALIVE(nset, nnx) -> nnx = (nnx + 1) % N
	:: else -> break
	od
}

/* act_send_heartbeat(): to every configured member (§5.1). Its seq, its
 * PARKED flag and its want set are not modelled: a waiter's WANT goes to
 * the holder as the model knows it (SUMMON_DUE). */
inline hb_all(hm) {
	for (k2 : 0 .. N - 1) {
		if
		:: k2 != hm -> send(k2, HB, hm, te[hm], 0, 0, ta[hm], 0)
		:: else -> skip
		fi
	}
}

/* epoch_mint(): an epoch above BASE and every one we know, ours by its low bits */
inline epoch_mint(mm, mbase, me_) {
	me_ = ((GEN(MAX(mbase, ep[mm])) + 1) << 2) | mm
}

/* epoch_reepoch(): a new epoch for the token held, heartbeat at once if RHB (after a
 * skip, a take-back or a membership change, §3.2, §5.3, §5.4) */
inline epoch_reepoch(rm, rbase, rhb) {
	epoch_mint(rm, rbase, ne);
	if
	:: GEN(ne) <= MAXGEN ->
		floor_e[ne] = granted_e;
		ep[rm] = ne;
		te[rm] = ne; ts[rm] = 0; tc[rm] = 0;
#ifdef BUG_KNOWS_KEPT
		skip;   /* planted: the old epoch's knows set stays with the new one */
#else
		tk[rm] = BIT(rm);   /* the minter knows it (§4.4) */
#endif
		seen_e[rm] = ne; seen_s[rm] = 0;
		if
		:: rhb -> hb_all(rm)
		:: else -> skip
		fi
	:: else -> drop(rm); bounded = 1   /* out of modelled epochs */
	fi
}

/* members_apply(): pending joins and leaves change the alive set under
 * a new epoch; too few left drops the token (no_quorum) */
inline apply(pm) {
	na = ta[pm]; nb = te[pm]; chg = 0;
	for (k : 0 .. N - 1) {
		if
		:: k != pm && ALIVE(jpend[pm], k) && (!ALIVE(na, k) || jmax[pm] >= te[pm]) ->
			na = na | BIT(k); nb = MAX(nb, jmax[pm]); chg = 1
		:: else -> skip
		fi;
		if
		:: k != pm && ALIVE(lpend[pm], k) && ALIVE(na, k) -> na = na & ~BIT(k); chg = 1
		:: else -> skip
		fi
	}
	jpend[pm] = 0; jmax[pm] = 0; lpend[pm] = 0;
	if
	:: leaving[pm] && ALIVE(na, pm) -> na = na & ~BIT(pm); chg = 1
	:: else -> skip
	fi;
	if
	:: chg && COUNT(na) < Q -> drop(pm)
	:: chg && COUNT(na) >= Q ->
		/* a member out of the token waits in it no more (§3.5); a park
		 * re-epoched, or a holder left alone, is heartbeat at once */
		ta[pm] = na; tw[pm] = tw[pm] & na;
		epoch_reepoch(pm, nb, parked[pm] || (na & ~BIT(pm)) == 0)
	:: else -> skip
	fi
}

/* jump_next() (§3.5): the plain successor on a walk and while the epoch is
 * not confirmed; else the first member after us in ring order whose bit is
 * in the want set (planted: the last, or the lowest index), the plain
 * successor if nobody's is. JNX: the member; JM itself when alone. */
inline jump_next(jm, jnx) {
	next_in(jm, ta[jm], jnx);
	if
	:: jnx == jm -> skip
	:: jnx != jm && twl[jm] > 0 -> twl[jm]--
	:: jnx != jm && twl[jm] == 0 && !CONFIRMED(jm) -> skip
	:: jnx != jm && twl[jm] == 0 && CONFIRMED(jm) && !OTHERS_WANT(jm) -> skip
	:: jnx != jm && twl[jm] == 0 && CONFIRMED(jm) && OTHERS_WANT(jm) ->
		jnx = jm;
		for (k2 : 1 .. N - 1) {
			if
			:: ALIVE(tw[jm] & ta[jm], (jm + k2) % N) ->
#if defined(BUG_JUMP_LAST)
				jnx = (jm + k2) % N   /* planted: the last wanter */
#elif defined(BUG_JUMP_LOWEST)
				if   /* planted: the lowest index waiting */
				:: jnx == jm || (jm + k2) % N < jnx -> jnx = (jm + k2) % N
				:: else -> skip
				fi
#else
				if
				:: jnx == jm -> jnx = (jm + k2) % N
				:: else -> skip
				fi
#endif
			:: else -> skip
			fi
		};
		k2 = 0
	fi
}

/* visit_pass(): membership applied, our own bit set again if a client of
 * ours still waits or was served in this visit (it most likely asks again),
 * to the member jump_next() picks with seq + 1, its bit cleared (its
 * visit), awaiting its ack */
inline pass(pm) {
	parked[pm] = 0; summoned[pm] = 0;
	apply(pm);
	if
	:: phase[pm] == HELD ->
		tw[pm] = tw[pm] & ~BIT(pm);
		if
		:: (want[pm] || vs[pm]) && !leaving[pm] -> tw[pm] = tw[pm] | BIT(pm)
		:: else -> skip
		fi;
		jump_next(pm, nx);
		if
		:: nx == pm && leaving[pm] -> drop(pm)
		:: nx == pm && !leaving[pm] -> vg[pm] = 0
		:: nx != pm && ts[pm] >= MAXSEQ -> bounded = 1   /* out of modelled hops: it stays */
		:: nx != pm && ts[pm] < MAXSEQ ->
			vg[pm] = 0;
			ts[pm]++;
			phase[pm] = PASSING;
			refused[pm] = REFUSED_NONE;
			pass_to[pm] = nx;
			retries[pm] = RETRIES;
#ifndef BUG_WANT_KEPT
			tw[pm] = tw[pm] & ~BIT(nx);   /* its visit (§3.5) */
#endif
			send(nx, TOKEN, pm, te[pm], ts[pm], tc[pm], ta[pm] | tk[pm] << 4, tw[pm] | twl[pm] << 4)
		fi
	:: else -> skip
	fi
}

/* skip_successor(): it is dead to this token; a new epoch (§3.2) */
inline skip_succ(sm) {
	ta[sm] = ta[sm] & ~BIT(pass_to[sm]);
	tw[sm] = tw[sm] & ~BIT(pass_to[sm]);
	ov[pass_to[sm]] = 0;   /* it waits anew, if it lives (I5) */
	phase[sm] = HELD;
	if
	:: COUNT(ta[sm]) < Q -> drop(sm)
	:: else ->
		epoch_reepoch(sm, te[sm], 1);
		if
		:: phase[sm] == HELD -> one_token(sm); vg[sm] = 1; pass(sm)
		:: else -> skip
		fi
	fi
}

/* members_take_back(): the successor refused this very pass and no ack came: hand
 * it over again under a new epoch, which readmits it (§3.2 case 2, §5.3) */
inline members_take_back(bm) {
	phase[bm] = HELD;
	vg[bm] = 1;
	ov[pass_to[bm]] = 0;   /* taken back in: it waits anew (I5) */
	nb = MAX(ref_ep[bm], te[bm]);   /* (spin cannot take a conditional as an inline argument) */
	epoch_reepoch(bm, nb, 1);
	if
	:: phase[bm] == HELD -> one_token(bm); jpend[bm] = jpend[bm] & ~BIT(pass_to[bm]); pass(bm)
	:: else -> skip
	fi
}

/* I3: no other member holds a token of the epoch M holds; and with no
 * datagram lost and no pause, no other member holds a token at all (no
 * second token arises from crash-stops, duplicates and reordering, §3.2) */
inline one_token(om) {
	for (k : 0 .. N - 1) {
		assert(k == om || phase[k] != HELD || te[k] != te[om]);
		assert(faulty || k == om || phase[k] != HELD)
	}
}

/* I5, fairness with jumps (§3.5): while N's bit is in the token's want
 * set, no other member is granted twice; N's visit (taken or refused by
 * name), its skip or take-back, its crash or restart and a regeneration
 * start its count again. Judged while one token runs (I2's precondition). */
inline fair_grant(gm) {
	for (k2 : 0 .. N - 1) {
		if
		:: k2 != gm && ALIVE(tw[gm], k2) ->
			assert(faulty || !ALIVE(ov[k2], gm));   /* I5 */
			ov[k2] = ov[k2] | BIT(gm)
		:: k2 != gm && !ALIVE(tw[gm], k2) -> ov[k2] = 0
		:: else -> skip
		fi
	};
	k2 = 0
}

/* clients_grant(): fence epoch << 32 | ++counter, checked against every fence before */
inline clients_grant(gm) {
	fair_grant(gm);
	tc[gm]++;
	assert(tc[gm] > maxcnt[te[gm]]);     /* I1: no fence granted twice */
	assert(floor_e[te[gm]] < te[gm]);    /* I1: newer fences exceed older ones (§4.4) */
	maxcnt[te[gm]] = tc[gm];
	granted_e = MAX(te[gm], granted_e);
	granted[gm] = 1;
	in_cs++;
	assert(faulty || in_cs == 1);        /* I2 without loss or pause */
	want[gm] = 0; sm_e[gm] = 0; sm_s[gm] = 0;
	vg[gm] = 1; vs[gm] = 1
}

/* park_allowed(): nobody else waits (the want set), no walk under way */
#define MAY_PARK(m) (PARK && !summoned[m] && (!want[m] || CONFIRMED(m)) && twl[m] == 0 && !OTHERS_WANT(m))

/* visit_serve(): grant, park, stay or move on (§3.3, §3.4) */
inline visit_serve(sm) {
	act = 0;   /* 1: pass it on, 2: grant (one call of each keeps the step small) */
	if
	:: leaving[sm] -> act = 1
	:: else ->
		if
		:: ALONE(sm) -> parked[sm] = 0
		:: else -> skip
		fi;
		if
		:: !parked[sm] && !ALONE(sm) && MAY_PARK(sm) ->   /* park_token(): no heartbeat at once */
			parked[sm] = 1
		:: else -> skip
		fi;
		if
		:: vg[sm] && !ALONE(sm) && !(parked[sm] && !summoned[sm]) -> act = 1
		:: else ->
			vg[sm] = 0;
			if
			:: GRANTABLE(sm) -> act = 2
			:: !GRANTABLE(sm) && ALONE(sm) -> skip
			:: !GRANTABLE(sm) && !ALONE(sm) && parked[sm] && !want[sm] && !summoned[sm] -> skip
			:: else -> act = 1
			fi
		fi
	fi;
	if
	:: act == 1 -> pass(sm)
	:: act == 2 -> clients_grant(sm)
	:: else -> skip
	fi;
	act = 0
}

/* visit_serve() where the core calls it: after an event that may let the held
 * token act (a paced ring's holder chooses in steps of its own) */
inline serve_held(hm) {
	if
	:: PARK && phase[hm] == HELD && !granted[hm] -> visit_serve(hm)
	:: else -> skip
	fi
}

/* want_summon() (§3.5): a client here waits and the token is not here: a
 * WANT to the member that holds it, once per hop of the token (the core
 * sends it to where a heartbeat or its own pass said the token is, sends
 * it again, and forwards it after the token; the model's one datagram to
 * the holder stands for those, and only while the holder counts us and
 * does not have our bit yet: otherwise the core's WANT is ignored). */
#define SUMMONS_TO(m, k) (k != m && up[k] && phase[k] == HELD && ALIVE(ta[k], m) && \
			  !ALIVE(tw[k], m) && !(sm_e[m] == te[k] && sm_s[m] == ts[k]))
#if N == 3
#define ANY_SUMMONS(m) (SUMMONS_TO(m, 0) || SUMMONS_TO(m, 1) || SUMMONS_TO(m, 2))
#else
#define ANY_SUMMONS(m) (SUMMONS_TO(m, 0) || SUMMONS_TO(m, 1) || SUMMONS_TO(m, 2) || SUMMONS_TO(m, 3))
#endif
/* and one WANT on the way at a time (two tokens: one holder, then the other) */
#define WANT_OUT(m, i) (net[i] ?? [WANT, eval(m), _, _, _, _, _])
#if N == 3
#define NO_WANT_OUT(m) (!WANT_OUT(m, 0) && !WANT_OUT(m, 1) && !WANT_OUT(m, 2))
#else
#define NO_WANT_OUT(m) (!WANT_OUT(m, 0) && !WANT_OUT(m, 1) && !WANT_OUT(m, 2) && !WANT_OUT(m, 3))
#endif
#define SUMMON_DUE(m) (want[m] && phase[m] == NONE && !leaving[m] && ANY_SUMMONS(m) && NO_WANT_OUT(m))
inline want_summon(um) {
	if
	:: SUMMON_DUE(um) ->
		for (k2 : 0 .. N - 1) {
			if
			:: SUMMONS_TO(um, k2) && NO_WANT_OUT(um) ->
				sm_e[um] = te[k2]; sm_s[um] = ts[k2];
				send(k2, WANT, um, te[k2], ts[k2], 0, 0, 0)
			:: else -> skip
			fi
		};
		k2 = 0
	:: else -> skip
	fi
}

#ifdef BUG_DUP_EQ
#define DUP(oe, os, om) (oe == seen_e[om] && os == seen_s[om])   /* planted: only the last hop is a duplicate */
#else
#define DUP(oe, os, om) (oe == seen_e[om] && os <= seen_s[om])   /* §3.2 */
#endif

/* visit_on_token() */
inline visit_on_token(om, ofm, oe, os, oc, oa, oi) {
	if
	:: oe < ep[om] -> send(ofm, ACK, om, oe, os, ep[om], 1, 0)       /* stale: say so */
	:: oe >= ep[om] && DUP(oe, os, om) ->
		send(ofm, ACK, om, oe, os, 0, 0, 0)                       /* a duplicate */
	:: oe >= ep[om] && !(DUP(oe, os, om)) && leaving[om] ->
		ov[om] = 0;   /* refused by name: the wait ends as at a visit (I5) */
		send(ofm, LEAVE, om, acc_e[om], acc_s[om], oe, os, 0)     /* refused: leaving (§5.4) */
	:: oe >= ep[om] && !(DUP(oe, os, om)) && !leaving[om] &&
	   oe <= start_e[om] ->
		ov[om] = 0;
		send(ofm, JOIN, om, ep[om], oe, os, 0, 0)                 /* refused: restarted (§5.3) */
	:: oe >= ep[om] && !(DUP(oe, os, om)) && !leaving[om] &&
	   oe > start_e[om] ->
		epoch_adopt(om, oe);
		cc = oc; ok = oa >> 4; ow = oi & 15;
		if
		:: phase[om] != NONE && te[om] == oe ->   /* our pass came back round: it keeps what it knew */
			revoke(om);
			cc = MAX(tc[om], oc);
			ok = ok | tk[om]; ow = ow | tw[om]
		:: else -> skip
		fi;
		seen_e[om] = oe; seen_s[om] = os;
		acc_e[om] = oe; acc_s[om] = os;
		send(ofm, ACK, om, oe, os, 0, 0, 0);
		te[om] = oe; ts[om] = os; tc[om] = cc; ta[om] = oa & 15;
#ifdef BUG_WANT_KEPT
		tw[om] = ow;   /* planted: the visited member's bit stays */
#else
		tw[om] = ow & ~BIT(om);   /* our visit (§3.5) */
#endif
		tk[om] = ok | BIT(om);    /* we persisted the epoch: one more that knows it (§4.4) */
		twl[om] = oi >> 4;
		if
		:: twl[om] > COUNT(ta[om]) -> twl[om] = COUNT(ta[om])
		:: else -> skip
		fi;
		ok = 0; ow = 0;
		phase[om] = HELD;
		one_token(om);
		ov[om] = 0;   /* our visit ends our wait (I5) */
		electing[om] = 0;
		vg[om] = 0; vs[om] = 0; parked[om] = 0; summoned[om] = 0;
		apply(om);
		serve_held(om)
	fi
}

/* visit_on_ack() */
inline on_ack(km, kf, ke, ks, kknown, kstale) {
	if
	:: phase[km] == PASSING && kf == pass_to[km] && kstale ->
		epoch_adopt(km, kknown);
		if
		:: phase[km] != NONE && ke == te[km] -> drop(km)
		:: else -> skip
		fi
	:: phase[km] == PASSING && kf == pass_to[km] && !kstale && ke == te[km] && ks == ts[km] ->
		forget(km)
	:: else -> skip
	fi
}

/* act_send_join(): "take me in" (§5.3), at most one per heartbeat_ms; the
 * model's stand-in for that pace is one on the way at a time */
inline join(jm, jto) {
	if
	:: !(net[jto] ?? [JOIN, eval(jm), _, _, 0, _, _]) -> send(jto, JOIN, jm, ep[jm], 0, 0, 0, 0)
	:: else -> skip
	fi
}

/* visit_on_heartbeat() */
inline on_hb(hm, hf, he, hs, ha, hp) {
	if
	:: he >= ep[hm] ->
		epoch_adopt(hm, he);
		electing[hm] = 0;
		if
		:: !ALIVE(ha, hm) && !leaving[hm] -> join(hm, hf)
		:: else -> skip
		fi
	:: else ->
		/* stale: a token of an older epoch lives at HF. If ours is not
		 * heard, ask HF to take us in; it re-epochs above what we know
		 * (§5.3). A live token of ours was heard, or not: the model
		 * takes the worse, a JOIN either way. */
		if
		:: phase[hm] == NONE && !leaving[hm] -> join(hm, hf)
		:: else -> skip
		fi
	fi
}

/* want_on_msg(): a WANT while we hold the token adds its wanter to the want
 * set, if the token counts it, and ends a park (§3.5). One that finds the
 * token gone is dropped: the core forwards it after the token, which the
 * model's summons to the new holder stands for (SUMMON_DUE). */
inline want_on_msg(wm, wf) {
#ifdef BUG_SUMMONS_IGNORED
	skip   /* planted: a summons is never heard */
#else
	if
	:: phase[wm] == HELD && ALIVE(ta[wm], wf) && !ALIVE(tw[wm], wf) ->
		tw[wm] = tw[wm] | BIT(wf);
		if
		:: parked[wm] && !summoned[wm] -> summoned[wm] = 1; serve_held(wm)
		:: else -> skip
		fi
	:: else -> skip
	fi
#endif
}

/* members_on_join() */
inline members_on_join(jm, jf, je, jre, jrs) {
	if
	:: !leaving[jm] ->
		lpend[jm] = lpend[jm] & ~BIT(jf);
		jpend[jm] = jpend[jm] | BIT(jf); jmax[jm] = MAX(jmax[jm], je);
		if
		:: phase[jm] == HELD -> apply(jm); serve_held(jm)
#ifdef BUG_JOIN_TAKEBACK
		/* before issue 10: any JOIN from the successor took the pass back
		 * at once, re-epoching only if the membership said so */
		:: phase[jm] == PASSING && pass_to[jm] == jf ->
			phase[jm] = HELD; one_token(jm); vg[jm] = 1; pass(jm)
#else
		:: phase[jm] == PASSING && pass_to[jm] == jf && jre == te[jm] && jrs == ts[jm] &&
		   refused[jm] == REFUSED_NONE -> refused[jm] = REFUSED_JOIN; ref_ep[jm] = je
#ifdef BUG_TAKEBACK_NOWAIT
			/* planted: take it back at once, not one ack timeout later */
			; members_take_back(jm)
#endif
#endif
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* members_on_leave() */
inline members_on_leave(lm, lf, lae, las, lre, lrs) {
	jpend[lm] = jpend[lm] & ~BIT(lf);
	lpend[lm] = lpend[lm] | BIT(lf);
	if
#ifdef BUG_LEAVE_SKIP_ANY
	/* before issue 10: any LEAVE from the successor skipped it at once */
	:: phase[lm] == PASSING && pass_to[lm] == lf -> skip_succ(lm)
#else
	:: phase[lm] == PASSING && pass_to[lm] == lf && lre == te[lm] && lrs == ts[lm] ->
		if
		:: refused[lm] == REFUSED_NONE -> refused[lm] = REFUSED_LEAVE
		:: else -> skip
		fi
	:: phase[lm] == PASSING && pass_to[lm] == lf && !(lre == te[lm] && lrs == ts[lm]) &&
	   (lae > te[lm] || (lae == te[lm] && las >= ts[lm])) ->
		forget(lm)   /* hop_covers: the leaver has it and passes it on */
	:: phase[lm] == PASSING && pass_to[lm] == lf && !(lre == te[lm] && lrs == ts[lm]) &&
	   !(lae > te[lm] || (lae == te[lm] && las >= ts[lm])) ->
		send(lf, TOKEN, lm, te[lm], ts[lm], tc[lm], ta[lm] | tk[lm] << 4, tw[lm] | twl[lm] << 4)   /* resend now */
#endif
	:: phase[lm] == HELD -> apply(lm); serve_held(lm)
	:: else -> skip
	fi
}

/* The ack timeout may fire only when neither the pass nor its ack is on
 * the way: it was lost, refused, or the successor crashed. */
#define PASS_GONE(m) (!(net[pass_to[m]] ?? [TOKEN, eval(m), eval(te[m]), eval(ts[m]), _, _, _]) && \
		      !(net[m] ?? [ACK, eval(pass_to[m]), eval(te[m]), eval(ts[m]), _, _, _]))

/* No token anywhere: only then is a loss suspected without a fault (with
 * heartbeats, a live token is heard within loss_timeout_ms). */
#define GONE(i) (phase[i] == NONE && !(net[i] ?? [TOKEN, _, _, _, _, _, _]))
#if N == 3
#define NO_TOKEN (GONE(0) && GONE(1) && GONE(2))
#define TOKENS ((phase[0] != NONE) + (phase[1] != NONE) + (phase[2] != NONE))
#define UP ((up[0] && !leaving[0]) + (up[1] && !leaving[1]) + (up[2] && !leaving[2]))
#define WAITING ((up[0] && want[0]) || (up[1] && want[1]) || (up[2] && want[2]))
#else
#define NO_TOKEN (GONE(0) && GONE(1) && GONE(2) && GONE(3))
#define TOKENS ((phase[0] != NONE) + (phase[1] != NONE) + (phase[2] != NONE) + (phase[3] != NONE))
#define UP ((up[0] && !leaving[0]) + (up[1] && !leaving[1]) + (up[2] && !leaving[2]) + (up[3] && !leaving[3]))
#define WAITING ((up[0] && want[0]) || (up[1] && want[1]) || (up[2] && want[2]) || (up[3] && want[3]))
#endif

/* The heartbeats the model sends besides those of a new epoch: the ones a
 * member would miss for good without the periodic heartbeat of §5.1 (the
 * model sends no other; every run stays finite). J is up and does not know
 * the epoch of the token M holds (it restarted, or the heartbeat went to it
 * while it was down); and no heartbeat from M is on the way to it, nor a
 * JOIN from it to M (its answer is the heartbeat); or J is outside the
 * alive set of M's token and M has no JOIN of it (J's JOIN went to a member
 * the token jumps past, §3.5: the core's joiner sends one to every holder
 * it hears, and the holder heartbeats every heartbeat_ms). One J would drop as stale is not sent: M needs J's news,
 * which comes with the token, and a heartbeat J ignores, sent again and
 * again, would be a cycle no member of the real ring can make (M reads its
 * socket between heartbeats; checked by the cycle runs, docs/model.md). */
#define UNAWARE(m, j) ((j) != (m) && up[j] && !leaving[j] && \
		       (ep[j] < te[m] || (ep[j] == te[m] && !ALIVE(ta[m], j) && !ALIVE(jpend[m], j))) && \
		       !(net[j] ?? [HB, eval(m), _, _, _, _, _]) && \
		       !(net[m] ?? [JOIN, eval(j), _, _, _, _, _]))
#if N == 3
#define ANY_UNAWARE(m) (UNAWARE(m, 0) || UNAWARE(m, 1) || UNAWARE(m, 2))
#else
#define ANY_UNAWARE(m) (UNAWARE(m, 0) || UNAWARE(m, 1) || UNAWARE(m, 2) || UNAWARE(m, 3))
#endif

/* The token's alive set counts a member that is down (crashed for good, or
 * gone): only a walk finds it once nobody waits for it (§3.5). */
#define DOWN_IN(m, i) (ALIVE(ta[m], i) && !up[i])
#if N == 3
#define STALE_ALIVE(m) (DOWN_IN(m, 0) || DOWN_IN(m, 1) || DOWN_IN(m, 2))
#else
#define STALE_ALIVE(m) (DOWN_IN(m, 0) || DOWN_IN(m, 1) || DOWN_IN(m, 2) || DOWN_IN(m, 3))
#endif

/* Scratch of one atomic step, hidden from the state vector: nothing of
 * it lives from one step to the next. */
hidden mtype t;
hidden byte f, e, s, c, a, x, ne, na, nb, chg, k, k2, nx, cc, act, ok, ow;

proctype member(byte m)
{
	byte rk; /* the election's choice of participants */
end:	/* the bounds run out or the ring rests: a member may stop here for good */
	do
	/* a datagram arrives (on_datagram) */
	/* (one step per type: spin limits the size of a d_step) */
	:: d_step { up[m] && net[m] ? [TOKEN, _, _, _, _, _, _] -> net[m] ? t, f, e, s, c, a, x;
		visit_on_token(m, f, e, s, c, a, x) }
	:: d_step { up[m] && net[m] ? [ACK, _, _, _, _, _, _] -> net[m] ? t, f, e, s, c, a, x;
		on_ack(m, f, e, s, c, a) }
	:: d_step { up[m] && net[m] ? [HB, _, _, _, _, _, _] -> net[m] ? t, f, e, s, c, a, x;
		on_hb(m, f, e, s, a, x) }
	:: d_step { up[m] && net[m] ? [JOIN, _, _, _, _, _, _] -> net[m] ? t, f, e, s, c, a, x;
		members_on_join(m, f, e, s, c) }
	:: d_step { up[m] && net[m] ? [LEAVE, _, _, _, _, _, _] -> net[m] ? t, f, e, s, c, a, x;
		members_on_leave(m, f, e, s, c, a) }
	:: d_step { up[m] && net[m] ? [WANT, _, _, _, _, _, _] -> net[m] ? t, f, e, s, c, a, x;
		want_on_msg(m, f) }
	/* a member that is down or gone loses what arrives */
	:: d_step { !up[m] && nempty(net[m]) -> net[m] ? t, f, e, s, c, a, x }
#if PARK
#ifndef BUG_NO_WALKS
	/* walks (§3.5, jump_walk_due()): a lap of a parked token, LAPS of them,
	 * or a walk begun as a grant ends (below); and once the environment is
	 * calm, one whenever the alive set counts a member that is down, as the
	 * core's walk timer would start one some time */
	:: d_step { up[m] && phase[m] == HELD && parked[m] && !granted[m] && twl[m] == 0 &&
		    ((laps < LAPS && !calm) || (calm && STALE_ALIVE(m))) ->
		laps++; twl[m] = COUNT(ta[m]); pass(m) }
	:: d_step { up[m] && granted[m] && laps < LAPS && !calm && twl[m] == 0 ->
		laps++; twl[m] = COUNT(ta[m]);
		granted[m] = 0; in_cs--; serve_held(m) }
#endif
	/* a client asks (on_acquire), summoning the token (want_summon()) */
	:: d_step { up[m] && !leaving[m] && !want[m] && reqs < REQS && !calm ->
		reqs++; want[m] = 1;
		want_summon(m);
		serve_held(m) }
	/* the summons again, to the token's next holder (want_summon() from the
	 * summons timer, or a WANT forwarded after the token) */
	:: d_step { up[m] && SUMMON_DUE(m) -> want_summon(m) }
#else
	/* a paced ring: a client may be waiting at every visit, or none */
	:: d_step { up[m] && phase[m] == HELD && !granted[m] && !vg[m] && !leaving[m] &&
		    CONFIRMED(m) && tc[m] < MAXCNT -> want[m] = 1; clients_grant(m) }
	:: d_step { up[m] && phase[m] == HELD && !granted[m] && (!ALONE(m) || leaving[m]) &&
		    !(bounded && ts[m] >= MAXSEQ) -> pass(m) }   /* (out of hops, it stays for good) */
#endif
	/* it releases (on_release) */
	:: d_step { up[m] && granted[m] -> granted[m] = 0; in_cs--; serve_held(m) }
	/* the ack timeout (run_timers): take back, skip, or retransmit */
	:: d_step { up[m] && phase[m] == PASSING && PASS_GONE(m) ->
		if
		:: refused[m] == REFUSED_JOIN -> members_take_back(m)
		:: refused[m] == REFUSED_LEAVE -> skip_succ(m)
		:: refused[m] == REFUSED_NONE && retries[m] > 0 -> retries[m]--;
			send(pass_to[m], TOKEN, m, te[m], ts[m], tc[m], ta[m] | tk[m] << 4, tw[m] | twl[m] << 4)
		:: refused[m] == REFUSED_NONE && retries[m] == 0 -> skip_succ(m)
		fi }
	/* the heartbeat a member that restarted needs to learn the epoch and
	 * whether it is counted (§5.1, §5.3); the model sends only those */
	:: d_step { up[m] && phase[m] == HELD && !leaving[m] && ANY_UNAWARE(m) ->
		for (k : 0 .. N - 1) {
			if
			:: UNAWARE(m, k) -> send(k, HB, m, te[m], 0, 0, ta[m], 0)
			:: else -> skip
			fi
		};
		k = 0 }
	/* loss suspected (§5.2): an election reads the epochs of some set of
	 * members up (the checker chooses; it regenerates only with a quorum)
	 * and completes later, if no live token was heard meanwhile (§6).
	 * Once out of epochs (bounded), no more: the run is excused, and an
	 * election that can mint nothing would go on for ever. */
#ifdef BUG_ELECT_FOREVER
	:: atomic { up[m] && phase[m] == NONE && !electing[m] && !leaving[m] &&   /* planted */
#else
	:: atomic { up[m] && phase[m] == NONE && !electing[m] && !leaving[m] && !bounded &&
#endif
		    (NO_TOKEN || (sus < SUSPECTS && !calm)) ->
		/* Every member up answers an election hop; after a fault that
		 * also loses datagrams (a loss, a pause) one may be missed:
		 * the checker picks which (N: none). */
		if
		:: faulty -> if :: rk = 0 :: rk = 1 :: rk = 2 :: rk = N - 1 :: rk = N fi
		:: else -> rk = N
		fi;
		d_step {
			if
			:: !NO_TOKEN -> sus++; faulty = 1
			:: else -> skip
			fi;
			el_parts[m] = BIT(m);
			el_max[m] = ep[m];
			for (k : 0 .. N - 1) {
				if
				:: k != m && k != rk && up[k] && !leaving[k] ->
					el_parts[m] = el_parts[m] | BIT(k);
					el_max[m] = MAX(el_max[m], ep[k])
				:: else -> skip
				fi
			}
			rk = 0;
			if
			:: COUNT(el_parts[m]) >= Q -> electing[m] = 1
			:: else -> el_parts[m] = 0; el_max[m] = 0   /* no_quorum */
			fi
		} }
	/* regenerate(): above everything the election saw, alive = its participants */
	:: d_step { up[m] && electing[m] && phase[m] == NONE && (NO_TOKEN || faulty) ->
		electing[m] = 0;
		epoch_mint(m, el_max[m], ne);
		if
		:: GEN(ne) <= MAXGEN ->
			floor_e[ne] = granted_e;
			ep[m] = ne;
			te[m] = ne; ts[m] = 0; tc[m] = 0; ta[m] = el_parts[m];
			tw[m] = 0; twl[m] = 0;
#ifdef BUG_KNOWS_ELECTION
			tk[m] = el_parts[m];   /* planted: the election's participants count as knowing */
#else
			tk[m] = BIT(m);        /* the minter knows it (§4.4) */
#endif
			seen_e[m] = ne; seen_s[m] = 0;
			phase[m] = HELD;
			one_token(m);
			for (k : 0 .. N - 1) { ov[k] = 0 }   /* every wait starts again (I5) */
			vg[m] = 0; vs[m] = 0; parked[m] = 0; summoned[m] = 0;
			hb_all(m);
			serve_held(m)
		:: else -> bounded = 1
		fi;
		el_max[m] = 0; el_parts[m] = 0 }
	/* crash-stop (the client dies with it), and restart with the epoch persisted */
	:: d_step { up[m] && !leaving[m] && crashes < CRASHES && !calm -> crashes++;
		drop(m); up[m] = 0; want[m] = 0; electing[m] = 0; el_max[m] = 0; el_parts[m] = 0;
		jpend[m] = 0; jmax[m] = 0; lpend[m] = 0;
		sm_e[m] = 0; sm_s[m] = 0; ov[m] = 0;
		seen_e[m] = 0; seen_s[m] = 0; acc_e[m] = 0; acc_s[m] = 0 }
	:: d_step { !up[m] && !gone[m] && !calm -> up[m] = 1; ov[m] = 0;
		start_e[m] = ep[m] }   /* the crash forgot the rest */
	/* a graceful leave (on_leave_request): revoke, tell everyone, hand the
	 * token on without us, accept no new hop (§5.4) */
	:: d_step { up[m] && !leaving[m] && leaves < LEAVES && !calm -> leaves++;
		leaving[m] = 1; revoke(m); want[m] = 0; electing[m] = 0;
		for (k : 0 .. N - 1) {
			if
			:: k != m -> send(k, LEAVE, m, acc_e[m], acc_s[m], 0, 0, 0)
			:: else -> skip
			fi
		};
		k = 0;   /* (a loop may not end a d_step: spin 6.5 bug) */
		if
		:: phase[m] == HELD && !granted[m] -> pass(m)
		:: else -> skip
		fi }
	/* LEFT: once the token is not ours (or the deadline: as a crash) */
	:: d_step { up[m] && leaving[m] && phase[m] != HELD ->
		drop(m); up[m] = 0; gone[m] = 1 }
	od
}

/* The network: loses, duplicates and reorders within its budget. Its own
 * scratch (its steps are atomic, but not with the members'). */
hidden mtype nt;
hidden byte nf, n1, n2, n3, n4, n5;

#define FAULTS(i) \
	:: d_step { lost < LOSSES && nempty(net[i]) && !calm -> \
		net[i] ? nt, nf, n1, n2, n3, n4, n5; lost++; faulty = 1 } \
	:: d_step { dups < DUPS && nempty(net[i]) && nfull(net[i]) && !calm -> \
		net[i] ? <nt, nf, n1, n2, n3, n4, n5>; net[i] ! nt, nf, n1, n2, n3, n4, n5; dups++ } \
	:: d_step { swaps < SWAPS && len(net[i]) > 1 && !calm -> \
		net[i] ? nt, nf, n1, n2, n3, n4, n5; net[i] ! nt, nf, n1, n2, n3, n4, n5; swaps++ }

proctype network()
{
end:
	do
	FAULTS(0)
	FAULTS(1)
	FAULTS(2)
#if N == 4
	FAULTS(3)
#endif
	od
}

/* Liveness, as the bounded runs allow it: the environment may stop at any
 * point (calm: no more faults, requests or restarts). Every run is finite,
 * so once nothing can move (timeout) the ring must have served every
 * request and hold one token, with a quorum of members up and no fault
 * beyond crash-stops (I4, and "the ring ends with one token"), and that
 * token must be settled: nobody's bit left in its want set (every visit
 * cleared its member's), and no member down left in its alive set (a walk
 * found it, §3.5). A run that reached a model bound is excused. */
#define SETTLED(i) (phase[i] == NONE || (tw[i] == 0 && !STALE_ALIVE(i)))
#if N == 3
#define ALL_SETTLED (SETTLED(0) && SETTLED(1) && SETTLED(2))
#else
#define ALL_SETTLED (SETTLED(0) && SETTLED(1) && SETTLED(2) && SETTLED(3))
#endif
proctype monitor()
{
	calm = 1;
	timeout ->
	assert(bounded || faulty || UP < Q || (!WAITING && TOKENS == 1 && ALL_SETTLED))
}

init
{
	byte i;
	atomic {
		for (i : 0 .. N - 1) { up[i] = 1 }
		for (i : 0 .. N - 1) { run member(i) }
		run network();
		run monitor()
	}
}
