package tck

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// signals returns the case's store as a SignalStore, or skips the case.
func (f *fixture) signals() spi.SignalStore {
	f.t.Helper()
	return capability[spi.SignalStore](f, "spi.SignalStore")
}

// withSignal makes the job wait for signal name, with key and deadline
// (zero: none).
func withSignal(name, key string, deadline time.Time) jobOpt {
	return func(j *spi.Job) { j.Signal = &spi.SignalWait{Name: name, Key: key, Deadline: deadline} }
}

// waited returns the waiting completion of claimed job j at now
// (ratchet.WaitSignal): WAITING for w, with snoozes as its new snooze
// count.
func waited(j *spi.Job, now time.Time, w *spi.SignalWait, snoozes int) spi.Completion {
	return spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeWaiting, FinishedAt: now, Snoozes: snoozes,
		Attempts: j.Attempts + 1, Signal: w, HasDependents: j.Dependents > 0}
}

// anySignal leaves the signal wait out of a job comparison (assertWait
// compares it, times by instant).
var anySignal mask = func(j *spi.Job) { j.Signal = nil }

// assertInstant checks that got is the instant want (both zero, or equal
// and in UTC).
func assertInstant(t tb, want, got time.Time, msg string) bool {
	t.Helper()
	if want.IsZero() {
		return assert.True(t, got.IsZero(), "%s: want the zero time, got %s", msg, got.Format(time.RFC3339Nano))
	}
	if !assert.True(t, got.Equal(want), "%s: want %s, got %s", msg, want.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano)) {
		return false
	}
	if got.Location() != time.UTC {
		t.Errorf("%s: %s is in location %q; stored times are UTC", msg, got.Format(time.RFC3339Nano), got.Location())
		return false
	}
	return true
}

// assertWait checks the signal wait read back on got: the name, key and
// deadline want was inserted with, and the outcome o with payload (nil: no
// payload) at resolvedAt (zero with the empty outcome: still waiting).
func assertWait(t tb, want, got *spi.Job, o spi.SignalOutcome, payload []byte, resolvedAt time.Time, msg string) bool {
	t.Helper()
	msg = fmt.Sprintf("%s (job %s)", msg, want.ID)
	if !assert.NotNil(t, got.Signal, "%s: the job reads back without its Signal", msg) {
		return false
	}
	w, g := want.Signal, got.Signal
	ok := assert.Equal(t, w.Name, g.Name, "%s: Signal.Name", msg)
	ok = assert.Equal(t, w.Key, g.Key, "%s: Signal.Key", msg) && ok
	ok = assertInstant(t, w.Deadline, g.Deadline, msg+": Signal.Deadline") && ok
	ok = assert.Equal(t, o, g.Outcome, "%s: Signal.Outcome", msg) && ok
	if payload == nil {
		ok = assert.Nil(t, g.Payload, "%s: Signal.Payload of a wait not delivered", msg) && ok
	} else {
		ok = assert.Equal(t, payload, g.Payload, "%s: Signal.Payload is the delivered payload, byte for byte", msg) && ok
	}
	return assertInstant(t, resolvedAt, g.ResolvedAt, msg+": Signal.ResolvedAt") && ok
}

// assertStillWaiting checks that job j is WAITING, its wait unresolved.
func (f *fixture) assertStillWaiting(j *spi.Job, msg string) {
	f.t.Helper()
	g := f.get(j.ID)
	assert.Equal(f.t, spi.StatusWaiting, g.Status, "%s: job %s", msg, j.ID)
	assertWait(f.t, j, g, "", nil, time.Time{}, msg)
}

// assertResolved checks that job j, inserted waiting, was resolved at now
// with outcome o (and payload): PENDING due at now for a delivery or a
// timeout, CANCELLED at now for a cancel; every other field as inserted.
func (f *fixture) assertResolved(j *spi.Job, o spi.SignalOutcome, payload []byte, now time.Time, msg string) {
	f.t.Helper()
	g := f.get(j.ID)
	want := j.Clone()
	if o == spi.SignalCancelled {
		want.Status, want.FinishedAt = spi.StatusCancelled, now
	} else {
		want.Status, want.ScheduledAt = spi.StatusPending, now
	}
	assertJob(f.t, want, g, msg, anySignal)
	assertWait(f.t, j, g, o, payload, now, msg)
}

// resolved returns what a SignalStore call reports for the jobs js.
func resolved(js ...*spi.Job) []spi.ResolvedSignal {
	out := []spi.ResolvedSignal{}
	for _, j := range js {
		out = append(out, spi.ResolvedSignal{JobID: j.ID, TaskName: j.TaskName, Name: j.Signal.Name})
	}
	return out
}

// nonNil returns rs, or an empty slice for nil, so that "none" compares
// equal however the store spells it.
func nonNil(rs []spi.ResolvedSignal) []spi.ResolvedSignal {
	if rs == nil {
		return []spi.ResolvedSignal{}
	}
	return rs
}

// expire runs ExpireSignals, failing the case on an error.
func (f *fixture) expire(ss spi.SignalStore, now time.Time, limit int) []spi.ResolvedSignal {
	f.t.Helper()
	rs, err := ss.ExpireSignals(f.ctx, now, limit)
	require.NoError(f.t, err, "ExpireSignals(now %s, limit %d)", now.Format(time.RFC3339Nano), limit)
	require.LessOrEqual(f.t, len(rs), max(limit, 0), "ExpireSignals returned more jobs than its limit")
	return nonNil(rs)
}

// deliverByKey runs DeliverSignalByKey, failing the case on an error.
func (f *fixture) deliverByKey(ss spi.SignalStore, key, name string, payload []byte, now time.Time, limit int) []spi.ResolvedSignal {
	f.t.Helper()
	rs, err := ss.DeliverSignalByKey(f.ctx, key, name, payload, now, limit)
	require.NoError(f.t, err, "DeliverSignalByKey(key %q, name %q, limit %d)", key, name, limit)
	return nonNil(rs)
}

func signalCases() []testCase {
	return []testCase{
		{"InsertWaiting", func(t tb, f *fixture) {
			f.signals()
			w := f.newJob(withSignal("tck.approve", "order-1/ü", at(2*time.Hour+123456*time.Microsecond)))
			// The outcome fields are the store's to fill: an insert ignores them.
			w.Signal.Outcome, w.Signal.Payload, w.Signal.ResolvedAt = spi.SignalDelivered, []byte(`"forged"`), at(time.Minute)
			open := f.newJob(withSignal("tck.approve", "", time.Time{}))
			plain := f.newJob()
			f.insert(w, open, plain)
			for _, j := range []*spi.Job{w, open} {
				g := f.get(j.ID)
				want := j.Clone()
				want.Status = spi.StatusWaiting
				assertJob(t, want, g, "GetJob of a job inserted with a signal wait: WAITING, every other field as inserted", anySignal)
				assertWait(t, j, g, "", nil, time.Time{}, "GetJob of a job inserted with a signal wait (the outcome fields an insert is given are ignored)")
			}
			assert.Nil(t, f.get(plain.ID).Signal, "a job inserted without a signal wait reads back no Signal")
			assert.Equal(t, []uuid.UUID{w.ID, open.ID}, ids(f.listAll(spi.StatusWaiting)), "ListJobs filters by WAITING")
			assert.Equal(t, []uuid.UUID{plain.ID}, ids(f.listAll(spi.StatusPending)), "ListJobs by PENDING leaves WAITING jobs out")
			got := f.claim("node-a", 10, at(1000*time.Hour), 0)
			assert.Equal(t, []uuid.UUID{plain.ID}, ids(got), "WAITING jobs are never claimed, even long after their due time and deadline")
			f.assertStillWaiting(w, "a claim leaves a WAITING job alone")
			f.assertStillWaiting(open, "a claim leaves a WAITING job alone")
		}},
		{"Deliver", func(t tb, f *fixture) {
			ss := f.signals()
			w := f.insertOne(withSignal("tck.approve", "order-1", at(5*time.Hour)))
			plain := f.insertOne(withDue(at(10 * time.Hour)))
			now := at(time.Hour + 5*time.Microsecond)

			_, err := ss.DeliverSignal(f.ctx, w.ID, "tck.reject", []byte(`{"no":1}`), now)
			assert.ErrorIs(t, err, spi.ErrInvalidState, "DeliverSignal of a signal the job does not wait for")
			f.assertStillWaiting(w, "after a delivery of another signal")
			_, err = ss.DeliverSignal(f.ctx, f.nextID(), "tck.approve", nil, now)
			assert.ErrorIs(t, err, spi.ErrNotFound, "DeliverSignal to an unknown job")
			_, err = ss.DeliverSignal(f.ctx, plain.ID, "tck.approve", []byte(`{}`), now)
			assert.ErrorIs(t, err, spi.ErrInvalidState, "DeliverSignal to a PENDING job that awaits no signal")
			gp := f.get(plain.ID)
			assertJob(t, plain, gp, "a job that awaits no signal, after a refused delivery")

			payload := []byte(`{ "approved_by": "Zoë 🚀",` + "\n" + `"n": [1, 2] }`)
			res, err := ss.DeliverSignal(f.ctx, w.ID, "tck.approve", payload, now)
			require.NoError(t, err, "DeliverSignal to a job WAITING for it")
			assert.Equal(t, resolved(w)[0], res, "DeliverSignal reports the job, its task and the signal")
			f.assertResolved(w, spi.SignalDelivered, payload, now, "after the delivery: PENDING due at now, DELIVERED with the payload")

			_, err = ss.DeliverSignal(f.ctx, w.ID, "tck.approve", []byte(`"again"`), now.Add(time.Minute))
			assert.ErrorIs(t, err, spi.ErrInvalidState, "a second delivery to a resolved wait")
			f.assertResolved(w, spi.SignalDelivered, payload, now, "a second delivery changes nothing")
			assert.Empty(t, f.expire(ss, at(6*time.Hour), 10), "a delivered wait does not time out at its deadline")
			f.assertResolved(w, spi.SignalDelivered, payload, now, "after ExpireSignals past the deadline")

			assert.Empty(t, f.claim("node-a", 10, now.Add(-time.Microsecond), 0), "a delivered job is due at the delivery, not before")
			f.claimOne(w.ID, "node-a", now)
			_, err = ss.DeliverSignal(f.ctx, w.ID, "tck.approve", nil, now.Add(time.Minute))
			assert.ErrorIs(t, err, spi.ErrInvalidState, "DeliverSignal to a RUNNING job")
		}},
		{"DeliverByKey", func(t tb, f *fixture) {
			ss := f.signals()
			var same []*spi.Job
			for range 4 {
				same = append(same, f.newJob(withSignal("tck.paid", "order-7", time.Time{})))
			}
			otherKey := f.newJob(withSignal("tck.paid", "order-8", time.Time{}))
			otherName := f.newJob(withSignal("tck.shipped", "order-7", time.Time{}))
			noKey := f.newJob(withSignal("tck.paid", "", time.Time{}))
			f.insert(shuffled(append(slices.Clone(same), otherKey, otherName, noKey))...)
			untouched := func(msg string) {
				for _, j := range []*spi.Job{otherKey, otherName, noKey} {
					f.assertStillWaiting(j, msg)
				}
			}

			assert.Empty(t, f.deliverByKey(ss, "", "tck.paid", []byte(`{}`), at(time.Minute), 10), "the empty key names no job")
			untouched("after a delivery by the empty key")

			now, later := at(time.Hour+3*time.Microsecond), at(2*time.Hour+7*time.Microsecond)
			first, second := []byte(`{"amount":42}`), []byte(`{"amount":43}`)
			assert.Equal(t, resolved(same[0], same[1]), f.deliverByKey(ss, "order-7", "tck.paid", first, now, 2),
				"DeliverSignalByKey with limit 2 delivers to the first two waiting jobs of the key and name, in id order")
			for _, j := range same[:2] {
				f.assertResolved(j, spi.SignalDelivered, first, now, "delivered by key")
			}
			for _, j := range same[2:] {
				f.assertStillWaiting(j, "beyond the limit of a delivery by key")
			}
			untouched("after a delivery by key to other jobs")

			assert.Equal(t, resolved(same[2:]...), f.deliverByKey(ss, "order-7", "tck.paid", second, later, 10),
				"a second delivery by key delivers to the rest, none twice")
			for _, j := range same[:2] {
				f.assertResolved(j, spi.SignalDelivered, first, now, "a second delivery by key leaves the jobs delivered before")
			}
			for _, j := range same[2:] {
				f.assertResolved(j, spi.SignalDelivered, second, later, "delivered by the second call")
			}
			assert.Empty(t, f.deliverByKey(ss, "order-7", "tck.paid", second, later.Add(time.Minute), 10), "nothing of the key is left waiting")
			untouched("after every delivery by key")
			assert.ElementsMatch(t, ids(same), ids(f.claim("node-a", 10, later, 0)), "every job delivered to is claimable once")
		}},
		{"Expire", func(t tb, f *fixture) {
			ss := f.signals()
			now := at(time.Hour + 250*time.Microsecond)
			a := f.newJob(withSignal("tck.s", "k", at(30*time.Minute)))
			atNow := f.newJob(withSignal("tck.s", "k", now)) // a deadline of exactly now has come
			c := f.newJob(withSignal("tck.t", "", at(10*time.Minute+3*time.Microsecond)))
			soon := f.newJob(withSignal("tck.s", "k", now.Add(time.Microsecond)))
			never := f.newJob(withSignal("tck.s", "k", time.Time{}))
			late := f.newJob(withSignal("tck.s", "", at(3*time.Hour)))
			f.insert(shuffled([]*spi.Job{a, atNow, c, soon, never, late})...)

			assert.Empty(t, f.expire(ss, at(10*time.Minute), 10), "no deadline has come 3 µs before the earliest")
			assert.Equal(t, resolved(c, a), f.expire(ss, now, 2), "ExpireSignals times out the waits whose deadline is not after now, in deadline order, up to the limit")
			for _, j := range []*spi.Job{c, a} {
				f.assertResolved(j, spi.SignalTimedOut, nil, now, "timed out: PENDING due at now, TIMED_OUT, no payload")
			}
			for _, j := range []*spi.Job{atNow, soon, never, late} {
				f.assertStillWaiting(j, "beyond the limit, or not due")
			}
			assert.Equal(t, resolved(atNow), f.expire(ss, now, 10), "a deadline of exactly now times out; later ones do not")
			f.assertResolved(atNow, spi.SignalTimedOut, nil, now, "timed out at its deadline")
			assert.Empty(t, f.expire(ss, now, 10), "nothing is left to time out at now")
			for _, j := range []*spi.Job{soon, never, late} {
				f.assertStillWaiting(j, "a deadline after now")
			}
			_, err := ss.DeliverSignal(f.ctx, a.ID, "tck.s", []byte(`{}`), now)
			assert.ErrorIs(t, err, spi.ErrInvalidState, "DeliverSignal to a wait that timed out")
			f.assertResolved(a, spi.SignalTimedOut, nil, now, "a delivery after the timeout changes nothing")

			much := at(100 * 24 * time.Hour)
			assert.Equal(t, resolved(soon, late), f.expire(ss, much, 10), "every deadline has come")
			f.assertStillWaiting(never, "a wait without a deadline never times out")
			f.claimSet("node-a", now, a, atNow, c)
			f.claimSet("node-a", much, soon, late)
		}},
		{"CancelWaiting", func(t tb, f *fixture) {
			ss := f.signals()
			w := f.insertOne(withSignal("tck.approve", "order-1", at(time.Hour)))
			now := at(30*time.Minute + 9*time.Microsecond)
			require.NoError(t, f.s.CancelJob(f.ctx, w.ID, now), "CancelJob of a WAITING job")
			f.assertResolved(w, spi.SignalCancelled, nil, now, "cancelled: CANCELLED at now, its wait CANCELLED")
			_, err := ss.DeliverSignal(f.ctx, w.ID, "tck.approve", []byte(`{}`), now.Add(time.Minute))
			assert.ErrorIs(t, err, spi.ErrInvalidState, "DeliverSignal to a cancelled wait")
			assert.Empty(t, f.deliverByKey(ss, "order-1", "tck.approve", []byte(`{}`), now.Add(time.Minute), 10), "DeliverSignalByKey passes over a cancelled wait")
			assert.Empty(t, f.expire(ss, at(2*time.Hour), 10), "a cancelled wait does not time out")
			assert.ErrorIs(t, f.s.CancelJob(f.ctx, w.ID, now.Add(time.Minute)), spi.ErrInvalidState, "CancelJob of a cancelled job")
			f.assertResolved(w, spi.SignalCancelled, nil, now, "nothing after the cancel changes it")
			assert.Empty(t, f.claim("node-a", 10, at(3*time.Hour), 0), "a cancelled job is never claimed")

			ws, ok := pick[spi.WorkflowStore](f.s)
			if !ok {
				return
			}
			// A workflow's root may wait for a signal: cancelling it
			// releases its child; CancelWorkflow resolves a WAITING job's
			// wait CANCELLED too.
			fl := f.newFlow()
			root := fl.add(nil, withSignal("tck.approve", "", time.Time{}))
			kid := fl.after(root)
			fl.insert()
			f.assertStillWaiting(root, "a workflow root with a signal wait")
			require.NoError(t, f.s.CancelJob(f.ctx, root.ID, now), "CancelJob of a WAITING workflow root")
			st, _ := f.waiting(kid)
			assert.Equal(t, spi.StatusPending, st, "cancelling a WAITING parent releases its child")
			assert.Equal(t, []spi.Status{spi.StatusCancelled}, f.parentStates(ws, kid))
			fl2 := f.newFlow()
			root2 := fl2.add(nil, withSignal("tck.approve", "", at(time.Hour)))
			fl2.after(root2)
			fl2.insert()
			n, err := ws.CancelWorkflow(f.ctx, fl2.id, now)
			require.NoError(t, err, "CancelWorkflow")
			assert.Equal(t, 2, n, "CancelWorkflow cancels the WAITING root and its BLOCKED child")
			f.assertResolved(root2, spi.SignalCancelled, nil, now, "a WAITING job of a cancelled workflow")
			_, err = ss.DeliverSignal(f.ctx, root2.ID, "tck.approve", nil, now.Add(time.Minute))
			assert.ErrorIs(t, err, spi.ErrInvalidState, "DeliverSignal to a job of a cancelled workflow")
		}},
		{"WaitFromRunning", func(t tb, f *fixture) {
			// A running job's body starts a wait (ratchet.WaitSignal): its
			// completion makes the job WAITING, the new wait in place of
			// the one it was submitted with, its snooze count one more and
			// its attempts as they were; the wait then ends as any wait.
			ss := f.signals()
			j := f.insertOne(withSignal("tck.first", "", time.Time{}))
			_, err := ss.DeliverSignal(f.ctx, j.ID, "tck.first", []byte(`1`), at(time.Second))
			require.NoError(t, err, "DeliverSignal to the job's first wait")
			c := f.claimOne(j.ID, "node-a", at(2*time.Second))
			w := &spi.Job{ID: j.ID, Signal: &spi.SignalWait{Name: "tck.second", Key: "order-9", Deadline: at(time.Hour + 5*time.Microsecond)}}
			require.Equal(t, []bool{true}, f.complete(waited(c, at(3*time.Second), w.Signal, 1)), "the waiting completion applies")
			want := c.Clone()
			want.Status, want.OwnerNode, want.Snoozes = spi.StatusWaiting, "", 1
			got := f.get(j.ID)
			assertJob(t, want, got, "job after a waiting completion: WAITING, no owner, one snooze more, attempts as they were", anySignal)
			assertWait(t, w, got, "", nil, time.Time{}, "the wait the run started replaces the resolved one it was submitted with")
			assert.Equal(t, []bool{true}, f.complete(waited(c, at(3*time.Second), w.Signal, 1)), "a replayed waiting completion counts as applied")
			assertWait(t, w, f.get(j.ID), "", nil, time.Time{}, "the replay writes nothing")
			assert.Empty(t, f.claim("node-b", 10, at(1000*time.Hour), 0), "a job waiting from a run is never claimed")

			rs := f.deliverByKey(ss, "order-9", "tck.second", []byte(`"paid"`), at(4*time.Second), 10)
			assert.Equal(t, []spi.ResolvedSignal{{JobID: j.ID, TaskName: j.TaskName, Name: "tck.second"}}, rs, "DeliverSignalByKey finds the wait a run started by its key")
			got = f.get(j.ID)
			assert.Equal(t, [2]any{spi.StatusPending, 0}, [2]any{got.Status, got.Attempts}, "delivered: PENDING, no attempt spent")
			assertInstant(t, at(4*time.Second), got.ScheduledAt, "delivered: due at the delivery")
			assertWait(t, w, got, spi.SignalDelivered, []byte(`"paid"`), at(4*time.Second), "the delivery resolves the wait the run started")

			c2 := f.claimOne(j.ID, "node-b", at(5*time.Second))
			w3 := &spi.Job{ID: j.ID, Signal: &spi.SignalWait{Name: "tck.third", Deadline: at(6 * time.Second)}}
			require.Equal(t, []bool{true}, f.complete(waited(c2, at(5*time.Second), w3.Signal, 2)), "a second wait from a later run")
			zombie := &spi.SignalWait{Name: "tck.zombie"}
			assert.Equal(t, []bool{false}, f.complete(waited(c, at(5*time.Second), zombie, 9)), "a superseded run's wait does not apply")
			assertWait(t, w3, f.get(j.ID), "", nil, time.Time{}, "a superseded wait writes nothing")
			assert.Equal(t, []spi.ResolvedSignal{{JobID: j.ID, TaskName: j.TaskName, Name: "tck.third"}}, f.expire(ss, at(6*time.Second), 10), "the wait times out at its deadline")
			got = f.get(j.ID)
			assert.Equal(t, [2]any{spi.StatusPending, 2}, [2]any{got.Status, got.Snoozes}, "timed out: PENDING, both waits counted as snoozes")
			assertWait(t, w3, got, spi.SignalTimedOut, nil, at(6*time.Second), "the timeout resolves the second wait")

			ws, ok := pick[spi.WorkflowStore](f.s)
			if !ok {
				return
			}
			// A workflow job with dependents that waits from its run does
			// not finish: its child stays BLOCKED until it does.
			fl := f.newFlow()
			root := fl.add(nil)
			kid := fl.after(root)
			fl.insert()
			rc := f.claimOne(root.ID, "node-a", at(time.Second))
			rw := waited(rc, at(2*time.Second), &spi.SignalWait{Name: "tck.approve"}, 1)
			require.Equal(t, []bool{true}, f.complete(rw), "a workflow root with dependents waits from its run")
			f.assertStillWaiting(&spi.Job{ID: root.ID, Signal: rw.Signal}, "the root waits")
			st, _ := f.waiting(kid)
			assert.Equal(t, spi.StatusBlocked, st, "a parent that waits has not finished: its child stays BLOCKED")
			assert.Empty(t, f.parentStates(ws, kid)[0], "the parent's state is not recorded on its child")
		}},
		{"DeliverVersusTimeout", func(t tb, f *fixture) {
			// Deliveries (by id and by key), timeouts and cancels race on
			// the same waits, spread over two handles with Reopen: each
			// wait is resolved once, its job ending as the winner says.
			ss := f.signals()
			hs := f.handles()
			sigs := []spi.SignalStore{ss}
			for _, h := range hs[1:] {
				sigs = append(sigs, handleAs[spi.SignalStore](f, h, "spi.SignalStore"))
			}
			const rounds, perRound = 3, 12
			keyPayload := []byte(`{"by":"key"}`)
			for round := range rounds {
				key := fmt.Sprintf("tck-race-%d", round)
				jobs := make([]*spi.Job, perRound)
				for i := range jobs {
					jobs[i] = f.newJob(withSignal("tck.go", key, at(time.Minute)))
				}
				f.insert(jobs...)
				now := at(time.Hour + time.Duration(round)*time.Minute)
				payloads := make([][]byte, perRound)
				var mu sync.Mutex
				wins := map[uuid.UUID][]spi.SignalOutcome{} // the calls that reported resolving each wait
				keyWins := map[uuid.UUID]bool{}
				cancelled := map[uuid.UUID]bool{} // CancelJob succeeded (on the wait, or on the PENDING job after it)
				var unexpected []error
				note := func(id uuid.UUID, o spi.SignalOutcome) {
					mu.Lock()
					defer mu.Unlock()
					wins[id] = append(wins[id], o)
				}
				oops := func(err error) {
					mu.Lock()
					defer mu.Unlock()
					unexpected = append(unexpected, err)
				}
				start := make(chan struct{})
				var wg sync.WaitGroup
				spawn := func(fn func()) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						fn()
					}()
				}
				for i, j := range jobs {
					payloads[i] = []byte(fmt.Sprintf(`{"round":%d,"job":%d}`, round, i))
					s := sigs[i%len(sigs)]
					spawn(func() {
						_, err := s.DeliverSignal(f.ctx, j.ID, "tck.go", payloads[i], now)
						switch {
						case err == nil:
							note(j.ID, spi.SignalDelivered)
						case !errors.Is(err, spi.ErrInvalidState):
							oops(fmt.Errorf("DeliverSignal(%s): %w", j.ID, err))
						}
					})
					if i%3 == 0 {
						h := hs[(i+1)%len(hs)]
						spawn(func() {
							err := h.CancelJob(f.ctx, j.ID, now)
							switch {
							case err == nil:
								mu.Lock()
								cancelled[j.ID] = true
								mu.Unlock()
							case !errors.Is(err, spi.ErrInvalidState):
								oops(fmt.Errorf("CancelJob(%s): %w", j.ID, err))
							}
						})
					}
					if i%4 == 1 {
						s := sigs[(i+1)%len(sigs)]
						spawn(func() {
							for range 2 * perRound {
								rs, err := s.ExpireSignals(f.ctx, now, 2)
								if err != nil {
									oops(fmt.Errorf("ExpireSignals: %w", err))
									return
								}
								for _, r := range rs {
									note(r.JobID, spi.SignalTimedOut)
								}
								if len(rs) == 0 {
									return
								}
							}
						})
					}
					if i == perRound/2 {
						spawn(func() {
							for range 2 * perRound {
								rs, err := s.DeliverSignalByKey(f.ctx, key, "tck.go", keyPayload, now, 3)
								if err != nil {
									oops(fmt.Errorf("DeliverSignalByKey: %w", err))
									return
								}
								for _, r := range rs {
									note(r.JobID, spi.SignalDelivered)
									mu.Lock()
									keyWins[r.JobID] = true
									mu.Unlock()
								}
								if len(rs) == 0 {
									return
								}
							}
						})
					}
				}
				close(start)
				wg.Wait()
				require.Empty(t, unexpected, "round %d: the losers of a race must fail wrapping spi.ErrInvalidState", round)

				var pending []uuid.UUID
				for i, j := range jobs {
					g := f.get(j.ID)
					require.NotNil(t, g.Signal, "round %d job %d reads back without its Signal", round, i)
					w := slices.Clone(wins[j.ID])
					if g.Signal.Outcome == spi.SignalCancelled {
						assert.True(t, cancelled[j.ID], "round %d job %d: its wait is CANCELLED but no CancelJob succeeded", round, i)
						w = append(w, spi.SignalCancelled)
					}
					if !assert.Len(t, w, 1, "round %d job %d: exactly one of delivery, timeout and cancel resolves a wait; these did: %v", round, i, w) {
						continue
					}
					var payload []byte
					if w[0] == spi.SignalDelivered {
						payload = payloads[i]
						if keyWins[j.ID] {
							payload = keyPayload
						}
					}
					assertWait(t, j, g, w[0], payload, now, fmt.Sprintf("round %d job %d: the wait as its winner resolved it", round, i))
					switch {
					case cancelled[j.ID]:
						assert.Equal(t, spi.StatusCancelled, g.Status, "round %d job %d: a CancelJob that succeeded cancelled the job", round, i)
					default:
						assert.Equal(t, spi.StatusPending, g.Status, "round %d job %d: a wait %s leaves the job PENDING", round, i, w[0])
						pending = append(pending, j.ID)
					}
				}
				got := f.claim("node-a", 3*perRound, now, 0)
				assert.ElementsMatch(t, pending, ids(got), "round %d: every job a delivery or a timeout made PENDING is claimed once", round)
				assert.Empty(t, f.claim("node-b", 3*perRound, now.Add(time.Hour), 0), "round %d: nothing is left to claim", round)
				assert.Empty(t, f.expire(ss, now, 100), "round %d: nothing is left waiting", round)
			}
		}},
		{"RejectsBad", func(t tb, f *fixture) {
			f.signals()
			bad := []struct {
				name  string
				words []string // one of them names the problem
				build func() []*spi.Job
			}{
				{"an empty signal name", []string{"signal"}, func() []*spi.Job {
					return []*spi.Job{f.newJob(withSignal("", "k", at(time.Hour)))}
				}},
				{"a 256-byte signal name", []string{"signal"}, func() []*spi.Job {
					return []*spi.Job{f.newJob(withSignal(strings.Repeat("n", 256), "k", time.Time{}))}
				}},
				{"a 256-byte signal key", []string{"signal"}, func() []*spi.Job {
					return []*spi.Job{f.newJob(withSignal("tck.s", strings.Repeat("ü", 128), time.Time{}))}
				}},
				{"a signal wait with dependencies", []string{"signal", "depend"}, func() []*spi.Job {
					w := f.newFlow()
					p := w.add(nil)
					w.after(p).Signal = &spi.SignalWait{Name: "tck.s"}
					return w.jobs
				}},
			}
			for _, tc := range bad {
				batch := append([]*spi.Job{f.newJob()}, tc.build()...)
				var err error
				noPanic(t, "InsertJobs with "+tc.name, func() { _, err = f.s.InsertJobs(f.ctx, cloneJobs(batch), spi.InsertOptions{}) })
				if assert.Error(t, err, "InsertJobs of a batch with %s", tc.name) {
					msg := strings.ToLower(err.Error())
					assert.True(t, slices.ContainsFunc(tc.words, func(w string) bool { return strings.Contains(msg, w) }),
						"the error of a batch with %s names the problem (one of %q): %v", tc.name, tc.words, err)
				}
				for _, j := range batch {
					_, err := f.s.GetJob(f.ctx, j.ID)
					assert.ErrorIs(t, err, spi.ErrNotFound, "a batch with %s: nothing of it is written (job %s)", tc.name, j.ID)
				}
			}
			assert.Empty(t, f.listAll(""), "no job of a refused batch is listed")
			// The longest name and key every store keeps, byte for byte.
			edge := f.insertOne(withSignal(strings.Repeat("n", spi.MaxSignalNameBytes), strings.Repeat("ü", 127)+"k", time.Time{}))
			f.assertStillWaiting(edge, "a 255-byte signal name and key are kept")
		}},
	}
}
