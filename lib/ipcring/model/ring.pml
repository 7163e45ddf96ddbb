/* SPDX-License-Identifier: MIT */
/*
 * ring.pml - Spin model of libipcring's sleep/wake protocol: the empty path
 * (consumer sleeps on the data eventcount), the full path (producer sleeps
 * on the space eventcount, capacity 2) and close on either side, under
 * sequential consistency (every protocol access in the C code is seq_cst).
 *
 * An eventcount word is W (bit 7, "a waiter announced") | epoch (bits 0-6).
 * Every shared access is its own statement, so the checker interleaves the
 * other side between the announce (fetch_or), each load of the re-check,
 * and FUTEX_WAIT's compare. The kernel's compare-and-queue and its wake are
 * single atomic steps, as kernel/futex/waitwake.c guarantees. Timeouts and
 * liveness slices are not modelled: a lost wakeup must show as a process
 * blocked for ever, i.e. an invalid end state.
 *
 * Mutants (spin -DNAME -a ring.pml), each must FAIL:
 *   NO_RECHECK  - sleep right after announcing, without re-checking
 *   NO_EPOCH    - wake (notify and close) without changing the futex word
 *   SB          - the flush's tail store sits in a store buffer that drains
 *                 after the eventcount load (release store, no StoreLoad)
 *   NO_PUBLISH  - the consumer sleeps without first publishing head
 */

#ifndef N
#define N	3		/* records the producer sends */
#endif
#define CAP	2		/* records the ring holds */
#define W	128

#ifdef NO_EPOCH
#define BUMP(w)	skip
#else
#define BUMP(w)	w = ((w & 127) + 1) & 127
#endif

byte tail = 0;			/* records flushed (published) by P */
byte head = 0;			/* records released (published) by C */
byte dec = 0;			/* data eventcount: C sleeps on it */
byte sec = 0;			/* space eventcount: P sleeps on it */
bit c_queued = 0;		/* kernel: C is queued in FUTEX_WAIT(dec) */
bit p_queued = 0;		/* kernel: P is queued in FUTEX_WAIT(sec) */
bit pclosed = 0;		/* prod_state == CLOSED */
bit cclosed = 0;		/* cons_state == CLOSED */
byte sbuf = 0;			/* SB: tail increments not yet in memory */

/* FUTEX_WAIT: compare and queue atomically, then block until woken */
inline futex_wait(word, val, queued)
{
	atomic { if :: word == val -> queued = 1 :: else -> skip fi };
	(queued == 0)
}

/* after a publish: load the word; if W, CAS it to (epoch+1) and FUTEX_WAKE */
inline notify(word, queued)
{
	if
	:: atomic { (word & W) -> BUMP(word) }; queued = 0
	:: atomic { !(word & W) -> skip }
	fi
}

/* a waiter that did not sleep withdraws its announcement (CAS e -> e & ~W) */
inline ec_cancel(word, e)
{
	atomic { if :: word == e -> word = e & 127 :: else -> skip fi }
}

/* close: bump both eventcounts unconditionally, then wake everybody */
inline wake_all()
{
	atomic { BUMP(dec) };
	atomic { BUMP(sec) };
	c_queued = 0;
	p_queued = 0
}

active proctype Producer()
{
	byte sent = 0, h, e;
	bit c;

	do
	:: sent == N -> break
	:: sent < N ->
		do	/* reserve: wait for space (the full path) */
		:: c = cclosed; h = head;
		   if
		   :: c -> goto closing			/* -EPIPE */
		   :: !c && sent - h < CAP -> break
		   :: !c && sent - h >= CAP ->
			atomic { e = sec | W; sec = sec | W };	/* announce */
#ifndef NO_RECHECK
			c = cclosed;			/* re-check, load by load */
			h = head;
			if
			:: c || sent - h < CAP -> ec_cancel(sec, e)
			:: else -> futex_wait(sec, e, p_queued)
			fi
#else
			futex_wait(sec, e, p_queued)
#endif
		   fi
		od;
		sent++;					/* commit */
#ifdef SB
		sbuf++;					/* flush: buffered store */
#else
		tail++;					/* flush: seq_cst store */
#endif
		notify(dec, c_queued)
	od;
closing:
#ifdef SB
	(sbuf == 0);					/* the state store is fenced */
#endif
	pclosed = 1;
	wake_all()
}

#ifdef SB
active proctype StoreBuffer()
{
end:	do
	:: atomic { sbuf > 0 -> tail++; sbuf-- }
	od
}
#endif

active proctype Consumer()
{
	byte pos = 0, t, e;
	bit s;

	do
	:: s = pclosed; t = tail;		/* state first, then tail */
	   if
	   :: t != pos ->			/* consume one record */
		pos++;
		assert(pos <= N && pos - head <= CAP);
		if
		:: head = pos; notify(sec, p_queued)	/* publish now */
		:: skip				/* or later: release threshold */
		fi
	   :: t == pos && s -> break		/* drained, closed: end of stream */
	   :: t == pos && !s -> goto closing	/* the consumer may close early */
	   :: t == pos && !s ->			/* the empty path */
#ifndef NO_PUBLISH
		if
		:: head != pos -> head = pos; notify(sec, p_queued)
		:: else -> skip
		fi;
#endif
		atomic { e = dec | W; dec = dec | W };	/* announce */
#ifndef NO_RECHECK
		s = pclosed;			/* re-check, load by load */
		t = tail;
		if
		:: t != pos || s -> ec_cancel(dec, e)
		:: else -> futex_wait(dec, e, c_queued)
		fi
#else
		futex_wait(dec, e, c_queued)
#endif
	   fi
	od;
	assert(pos == N);			/* nothing lost before EOF */
	goto done;
closing:
	head = pos;
	notify(sec, p_queued);
	cclosed = 1;
	wake_all();
done:
	skip
}
