/* The token-passing core of docs/PROTOCOL.md as a Promela model, checked
 * exhaustively by SPIN (make model; docs/model.md says what it abstracts).
 * First cut (issue 13, open): token hops with acks, retransmits and skips
 * (§3.2), epochs minted, adopted and made stale (§4), grants only under a
 * confirmed epoch (§4.4), regeneration by a majority (§6, the election
 * abstracted as one atomic read of a majority's epochs), crash and restart
 * with the persisted epoch (§5.3, a restarted member refusing its old
 * epochs by silence), and a network that loses, duplicates and reorders.
 * Each name says the ring/node.c function or field it stands for. */

#ifndef N
#define N 3              /* members */
#endif
#define Q (N / 2 + 1)    /* majority quorum (ring_layout_quorum) */
#ifndef MAXGEN
#define MAXGEN 3         /* epoch generations that may be minted (mint()) */
#endif
#ifndef MAXSEQ
#define MAXSEQ 5         /* hops per epoch (token.seq) */
#endif
#ifndef MAXCNT
#define MAXCNT 2         /* grants per epoch (token.counter) */
#endif
#ifndef RETRIES
#define RETRIES 1        /* layout.retries */
#endif
#ifndef LOSSES
#define LOSSES 1         /* datagrams the network may lose */
#endif
#ifndef DUPS
#define DUPS 1           /* datagrams it may duplicate */
#endif
#ifndef CRASHES
#define CRASHES 1        /* crash-stops (each may restart) */
#endif
#ifndef SWAPS
#define SWAPS 2          /* reorderings */
#endif

#define NONE 0           /* enum token_phase */
#define HELD 1
#define PASSING 2
#define ALL ((1 << N) - 1)

mtype = { TOKEN, ACK, HB };  /* RING_MSG_TOKEN, TOKEN_ACK, HEARTBEAT */
/* Every RING_MSG_* of ring/wire.h is either modelled (model: lines) or
 * named as not yet (not-modelled:); run.sh fails on one that is neither.
 * model: TOKEN TOKEN_ACK HEARTBEAT
 * not-modelled: ELECTION ELECTION_ACK JOIN LEAVE STATUS_REQ STATUS_RESP
 * not-modelled: EPOCH_QUERY EPOCH_REPLY WANT
 * And every PHASE_* of ring/node.c's enum token_phase:
 * model-phase: NONE HELD PASSING */

/* One queue per receiver: type, sender, epoch, seq, counter or the ack's
 * known epoch, the alive set or the ack's STALE flag. */
chan net[N] = [3] of { mtype, byte, byte, byte, byte, byte };

/* struct ring_node, one entry per member */
byte ep[N];       /* epoch: newest known, persisted before it is acted on */
byte start_e[N];  /* start_epoch: loaded at restart; its tokens are refused */
byte phase[N];
byte te[N], ts[N], tc[N], ta[N]; /* token: epoch, seq, counter, alive */
byte pass_to[N], retries[N];
byte seen_e[N], seen_s[N];
bool granted[N];
bool up[N];

/* The checker's bookkeeping (simcheck.c's, in small) */
byte maxcnt[4 * (MAXGEN + 2)];   /* highest counter granted per epoch */
byte floor_e[4 * (MAXGEN + 2)];  /* highest epoch granted under when this one was minted */
byte granted_e;                  /* highest epoch granted under so far */
byte in_cs;
byte lost, dups, crashes, swaps;
bool faulty;   /* a datagram was lost: I2's precondition is gone */

#define GEN(e) ((e) >> 2)
#define ALIVE(s, i) (((s) >> (i)) & 1)
#define COUNT(s) (ALIVE(s, 0) + ALIVE(s, 1) + ALIVE(s, 2) + ALIVE(s, 3))

/* adopt(): learn epoch E; a token older than it is dropped (§4.3) */
inline adopt(am, ae) {
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

/* drop_token() and revoke_grant() */
inline drop(dm) {
	if
	:: granted[dm] -> granted[dm] = 0; in_cs--
	:: else -> skip
	fi;
	phase[dm] = NONE
}

/* next_in(): the next member of set S after M in ring order */
inline next_in(nm, nset, nnx) {
	nnx = (nm + 1) % N;
	do
	:: nnx != nm && !ALIVE(nset, nnx) -> nnx = (nnx + 1) % N
	:: else -> break
	od
}

/* Sends never block (a step is atomic): a full queue loses the datagram,
 * which, like any loss, ends I2's precondition. */
inline send(sto, stt, sf, se, ss, sc, sa) {
	if
	:: nfull(net[sto]) -> net[sto] ! stt, sf, se, ss, sc, sa
	:: full(net[sto]) -> faulty = 1
	fi
}

/* The heartbeat of a new epoch, to everyone at once (§3.2, §6) */
inline hb_all(hm, he) {
	for (k2 : 0 .. N - 1) {
		if
		:: k2 != hm -> send(k2, HB, hm, he, 0, 0, 0)
		:: else -> skip
		fi
	}
}

/* mint(): an epoch above BASE and every one we know, ours by its low bits */
inline mint(mm, mbase, me_) {
	me_ = ((GEN((mbase > ep[mm] -> mbase : ep[mm])) + 1) << 2) | mm
}

/* pass_token(): to the next member alive, seq + 1, awaiting its ack */
inline pass(pm) {
	next_in(pm, ta[pm], nx);
	if
	:: nx != pm && ts[pm] < MAXSEQ ->
		ts[pm]++;
		phase[pm] = PASSING;
		pass_to[pm] = nx;
		retries[pm] = RETRIES;
		send(nx, TOKEN, pm, te[pm], ts[pm], tc[pm], ta[pm])
	:: else -> skip  /* alone, or out of modelled hops: it stays */
	fi
}

/* reepoch() after skip_successor(): a new epoch makes a copy at the
 * skipped member stale; it is heartbeat at once (§3.2) */
inline reepoch(rm) {
	mint(rm, te[rm], ne);
	if
	:: GEN(ne) <= MAXGEN ->
		floor_e[ne] = granted_e;
		ep[rm] = ne;
		te[rm] = ne; ts[rm] = 0; tc[rm] = 0;
		seen_e[rm] = ne; seen_s[rm] = 0;
		hb_all(rm, ne)
	:: else -> drop(rm)   /* out of modelled epochs */
	fi
}

/* on_token() */
inline on_token(om, ofm, oe, os, oc, oa) {
	if
	:: oe < ep[om] -> send(ofm, ACK, om, oe, os, ep[om], 1)          /* stale: say so */
	:: oe >= ep[om] && oe == seen_e[om] && os <= seen_s[om] ->
		send(ofm, ACK, om, oe, os, ep[om], 0)                    /* a duplicate */
	:: oe >= ep[om] && !(oe == seen_e[om] && os <= seen_s[om]) &&
	   (oe <= start_e[om] || !ALIVE(oa, om)) -> skip            /* refused (§5.3) */
	:: oe >= ep[om] && !(oe == seen_e[om] && os <= seen_s[om]) &&
	   oe > start_e[om] && ALIVE(oa, om) ->
		adopt(om, oe);
		cc = oc;
		if
		:: phase[om] != NONE && te[om] == oe ->   /* our pass came back round */
			if
			:: granted[om] -> granted[om] = 0; in_cs--
			:: else -> skip
			fi;
			cc = (tc[om] > oc -> tc[om] : oc)
		:: else -> skip
		fi;
		seen_e[om] = oe; seen_s[om] = os;
		send(ofm, ACK, om, oe, os, ep[om], 0);
		te[om] = oe; ts[om] = os; tc[om] = cc; ta[om] = oa;
		phase[om] = HELD
	fi
}

/* on_token_ack() */
inline on_ack(km, kf, ke, ks, kknown, kstale) {
	if
	:: phase[km] == PASSING && kf == pass_to[km] && kstale ->
		adopt(km, kknown);
		if
		:: phase[km] != NONE && ke == te[km] -> drop(km)
		:: else -> skip
		fi
	:: phase[km] == PASSING && kf == pass_to[km] && !kstale && ke == te[km] && ks == ts[km] ->
		phase[km] = NONE
	:: else -> skip
	fi
}

/* The ack timeout may fire only when neither the pass nor its ack is on
 * the way: it was lost, or the successor crashed or refused it. */
#define PASS_GONE(m) (!(net[pass_to[m]] ?? [TOKEN, eval(m), eval(te[m]), eval(ts[m]), _, _]) && \
		      !(net[m] ?? [ACK, eval(pass_to[m]), eval(te[m]), eval(ts[m]), _, _]))

/* No token anywhere: only then may a loss be suspected without a lost
 * datagram (with heartbeats, a live token is heard within loss_timeout). */
#define GONE(i) (phase[i] == NONE && !(net[i] ?? [TOKEN, _, _, _, _, _]))
#if N == 3
#define NO_TOKEN (GONE(0) && GONE(1) && GONE(2))
#else
#define NO_TOKEN (GONE(0) && GONE(1) && GONE(2) && GONE(3))
#endif

/* Scratch of one atomic step, hidden from the state vector: nothing of
 * it lives from one step to the next. */
hidden mtype t;
hidden byte f, e, s, c, a, ne, k, k2, nx, cc, best, parts;

proctype member(byte m)
{
	byte rparts, rk; /* the election's choice: reset after each */
end:	/* the bounds run out: a member may rest here for good */
	do
	/* a datagram arrives (on_datagram) */
	:: d_step { up[m] && nempty(net[m]) -> net[m] ? t, f, e, s, c, a;
		if
		:: t == TOKEN -> on_token(m, f, e, s, c, a)
		:: t == ACK -> on_ack(m, f, e, s, c, a)
		:: t == HB -> adopt(m, e)
		fi }
	/* a down member's datagrams are lost with it */
	:: d_step { !up[m] && nempty(net[m]) -> net[m] ? t, f, e, s, c, a }
	/* a client is granted (grant(); §4.4: a majority knows the epoch) */
	:: d_step { up[m] && phase[m] == HELD && !granted[m] && ts[m] + 1 >= Q && tc[m] < MAXCNT ->
		tc[m]++;
		assert(tc[m] > maxcnt[te[m]]);     /* no fence granted twice */
		assert(floor_e[te[m]] < te[m]);    /* newer fences exceed older ones */
		maxcnt[te[m]] = tc[m];
		granted_e = (te[m] > granted_e -> te[m] : granted_e);
		granted[m] = 1;
		in_cs++;
		assert(faulty || in_cs == 1) }     /* I2 without loss */
	/* it releases */
	:: d_step { up[m] && granted[m] -> granted[m] = 0; in_cs-- }
	/* the held token moves on (serve()) */
	:: d_step { up[m] && phase[m] == HELD && !granted[m] -> pass(m) }
	/* the ack timeout (run_timers): retransmit, or skip the successor */
	:: d_step { up[m] && phase[m] == PASSING && PASS_GONE(m) ->
		if
		:: retries[m] > 0 -> retries[m]--;
			send(pass_to[m], TOKEN, m, te[m], ts[m], tc[m], ta[m])
		:: retries[m] == 0 ->
			ta[m] = ta[m] & ~(1 << pass_to[m]);
			phase[m] = HELD;
			if
			:: COUNT(ta[m]) < Q -> drop(m)
			:: else -> reepoch(m); if :: phase[m] == HELD -> pass(m) :: else -> skip fi
			fi
		fi }
	/* loss suspected: an election reaches some majority (not necessarily
	 * the members that know the newest epoch), and the initiator
	 * regenerates above every epoch the participants know (start_election
	 * .. regenerate, §6, as one step). The participants are chosen
	 * nondeterministically: any set of up members, the initiator in it. */
	:: atomic { up[m] && phase[m] == NONE && (faulty || NO_TOKEN) ->
		rparts = 1 << m;
		for (rk : 0 .. N - 1) {
			if
			:: rk != m && up[rk] -> rparts = rparts | (1 << rk)
			:: true -> skip
			fi
		}
		d_step {
			best = ep[m];
			for (k : 0 .. N - 1) {
				if
				:: ALIVE(rparts, k) && ep[k] > best -> best = ep[k]
				:: else -> skip
				fi
			}
			mint(m, best, ne);
			if
			:: COUNT(rparts) >= Q && GEN(ne) <= MAXGEN ->
				floor_e[ne] = granted_e;
				ep[m] = ne;
				te[m] = ne; ts[m] = 0; tc[m] = 0; ta[m] = rparts;
				seen_e[m] = ne; seen_s[m] = 0;
				phase[m] = HELD;
				hb_all(m, ne)
			:: else -> skip  /* no quorum, or out of modelled epochs */
			fi;
			rparts = 0; rk = 0
		} }
	/* crash-stop, and restart with what was persisted */
	:: d_step { up[m] && crashes < CRASHES -> crashes++;
		drop(m); up[m] = 0 }
	:: d_step { !up[m] -> up[m] = 1; phase[m] = NONE;
		start_e[m] = ep[m]; seen_e[m] = 0; seen_s[m] = 0 }
	od
}

/* The network: loses, duplicates and reorders within its budget. Its own
 * scratch (its steps are atomic, but not with the members'). */
hidden mtype nt;
hidden byte nf, ne_, ns, nc, na;

#define FAULTS(i) \
	:: d_step { lost < LOSSES && nempty(net[i]) -> \
		net[i] ? nt, nf, ne_, ns, nc, na; lost++; faulty = 1 } \
	:: d_step { dups < DUPS && nempty(net[i]) && nfull(net[i]) -> \
		net[i] ? <nt, nf, ne_, ns, nc, na>; net[i] ! nt, nf, ne_, ns, nc, na; dups++ } \
	:: d_step { swaps < SWAPS && nempty(net[i]) -> \
		net[i] ? nt, nf, ne_, ns, nc, na; net[i] ! nt, nf, ne_, ns, nc, na; swaps++ }

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

init
{
	byte i;
	atomic {
		for (i : 0 .. N - 1) { up[i] = 1 }
		for (i : 0 .. N - 1) { run member(i) }
		run network()
	}
}
