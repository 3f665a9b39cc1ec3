package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"
)

// The signal workload. Unless Scenario.NoSignals (or the store keeps no
// signals), about one arrival in eight is 1 to 3 jobs that wait for the
// signal "go" (spi.SignalWait), some under a key, most with a deadline 1
// to 20 s away. The admin workload delivers signals by job id (to waiting
// jobs and, to check the refusal, to others) and by key, and cancels
// waiting jobs; every node runs the signal sweeper's pass
// (spi.SignalStore.ExpireSignals, in batches of at most 3) each simulated
// second while it is up. At the heal phase the client delivers to every
// job still waiting. The model predicts every call exactly: which jobs a
// delivery, a key delivery or a sweep resolves (a sweep: WAITING, deadline
// reached, in deadline order), and that everything else is refused.
//
// The invariant, signal-once: every wait is resolved exactly once, by a
// delivery, a timeout or a cancel, never before its deadline by the
// sweeper, and the store reads back the outcome the model holds.

const invSignalOnce = "signal-once"

// signalName is the signal every waiting job of the workload waits for;
// otherName one that none does.
const (
	signalName = "go"
	otherName  = "stop"
	sweepBatch = 3
)

// ssig is a job's wait in the model.
type ssig struct {
	key        string
	deadline   time.Time
	outcome    spi.SignalOutcome
	payload    []byte
	resolvedAt time.Time
	// resolutions counts the resolutions the store reported.
	resolutions int
}

// signalsOn reports whether the run submits jobs that wait for signals.
func (w *world) signalsOn() bool {
	return !w.sc.NoSignals && spi.CapabilitiesOf(w.store).Signals != nil
}

var signalKeys = []string{"", "k1", "k2", "k3"}

// submitWaiting inserts 1 to 3 jobs that wait for the signal.
func (w *world) submitWaiting() error {
	now := w.now()
	k := 1 + w.rng.IntN(3)
	jobs := make([]*spi.Job, k)
	sigs := make([]*ssig, k)
	specs := make([]jobSpec, k)
	for i := range jobs {
		s := w.randomSpec()
		s.key, s.delay = "", 0
		specs[i] = s
		sg := &ssig{key: signalKeys[w.rng.IntN(len(signalKeys))]}
		if w.rng.IntN(10) < 7 {
			sg.deadline = now.Add(w.randDur(time.Second, 20*time.Second))
		}
		sigs[i] = sg
		jobs[i] = &spi.Job{
			ID: w.newID(), TaskName: s.task, Payload: []byte(fmt.Sprintf(`{"n":%d}`, len(w.jobs)+i+1)),
			Status: spi.StatusPending, Priority: s.prio, ScheduledAt: now, CreatedAt: now,
			MaxRetries: s.maxRetries, Backoff: s.backoff, BackoffParam: s.param,
			Tags: slices.Clone(s.tags), Resource: s.resource, ResourceLimit: s.limit,
			Signal: &spi.SignalWait{Name: signalName, Key: sg.key, Deadline: sg.deadline},
		}
	}
	res, err := w.store.InsertJobs(w.ctx, jobs, spi.InsertOptions{})
	if err != nil {
		return w.storeErr("InsertJobs", err)
	}
	if len(res) != len(jobs) {
		w.fail(invIdempotency, nil, nil, "InsertJobs returned %d results for %d waiting jobs", len(res), len(jobs))
		return nil
	}
	var added []*sjob
	parts := make([]string, k)
	for i, s := range specs {
		w.check(invIdempotency)
		if res[i].Duplicate || res[i].ID != jobs[i].ID {
			w.fail(invIdempotency, nil, nil, "waiting job %s was reported duplicate=%v id %s", jobs[i].ID, res[i].Duplicate, res[i].ID)
			return nil
		}
		j := &sjob{
			idx: len(w.jobs), id: jobs[i].ID, task: s.task, poison: s.poison, prio: s.prio, due: now,
			maxRetries: s.maxRetries, backoff: s.backoff, param: s.param, tags: s.tags, resource: s.resource, limit: s.limit,
			pendPos: -1, runPos: -1, sig: sigs[i],
		}
		j.label = fmt.Sprintf("j%d", j.idx+1)
		w.jobs = append(w.jobs, j)
		w.byID[j.id] = j
		w.nonTerminal++
		w.setStatus(j, spi.StatusWaiting)
		w.touch(j)
		added = append(added, j)
		desc := fmt.Sprintf("%s(%s %s waits %q", j.label, s.task, s.prio, signalName)
		if j.sig.key != "" {
			desc += " key " + j.sig.key
		}
		if !j.sig.deadline.IsZero() {
			desc += " until " + simtime.Offset(j.sig.deadline.Sub(w.start))
		}
		parts[i] = desc + ")"
	}
	w.waits += k
	w.tracef(added, nil, "client submit %s", strings.Join(parts, " "))
	return nil
}

// resolveModel applies one resolution of j's wait to the model: PENDING
// due at now (delivered, timed out) or CANCELLED.
func (w *world) resolveModel(j *sjob, o spi.SignalOutcome, payload []byte, now time.Time) {
	j.sig.outcome, j.sig.payload, j.sig.resolvedAt = o, payload, now
	j.sig.resolutions++
	w.touch(j)
	if o == spi.SignalCancelled {
		w.setStatus(j, spi.StatusCancelled)
		j.finishedAt, j.handCancelled = now, true
		return
	}
	w.setStatus(j, spi.StatusPending)
	j.due = now
	w.wokenWait(j, o, now)
}

// waitingJobs returns the WAITING jobs that keep, in id order.
func (w *world) waitingJobs(keep func(*sjob) bool) []*sjob {
	var out []*sjob
	for _, j := range w.jobs {
		if j.status == spi.StatusWaiting && keep(j) {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *sjob) int { return bytes.Compare(a.id[:], b.id[:]) })
	return out
}

// checkResolved compares the jobs a store call resolved with the ones the
// model expects, in order, and applies them.
func (w *world) checkResolved(op string, want []*sjob, got []spi.ResolvedSignal, o spi.SignalOutcome, payload []byte, now time.Time, nodes []*node) {
	w.check(invSignalOnce)
	gotJobs := make([]*sjob, len(got))
	same := len(got) == len(want)
	for i, g := range got {
		gotJobs[i] = w.byID[g.JobID]
		if gotJobs[i] == nil {
			w.fail(invNothingLost, nil, nodes, "%s resolved job %s, which was never submitted", op, g.JobID)
			return
		}
		same = same && gotJobs[i] == want[i] && g.Name == signalName && g.TaskName == want[i].task
	}
	if !same {
		w.fail(invSignalOnce, append(slices.Clone(want), gotJobs...), nodes, "%s resolved %s; the waits demand %s", op, w.sigList(gotJobs), w.sigList(want))
		return
	}
	for _, j := range want {
		w.resolveModel(j, o, payload, now)
	}
}

func (w *world) sigList(js []*sjob) string {
	if len(js) == 0 {
		return "nothing"
	}
	parts := make([]string, len(js))
	for i, j := range js {
		d := "no deadline"
		if !j.sig.deadline.IsZero() {
			d = "deadline " + simtime.Offset(j.sig.deadline.Sub(w.start))
		}
		parts[i] = fmt.Sprintf("%s(%s key %q %s)", j.label, j.status, j.sig.key, d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// sweepPass is one pass of a node's signal sweeper: the engine's own
// (nodecore.SignalSweep), through a store that checks each call against the
// model.
func (w *world) sweepPass(n *node) error {
	if n.state != nodeUp || !n.claiming {
		return nil
	}
	p := nodecore.SignalSweep{Store: sweepCheck{SignalStore: spi.CapabilitiesOf(w.store).Signals, w: w, n: n}, Limit: sweepBatch}
	if err := nodecore.Drain(w.now(), func(now time.Time) (bool, error) { return p.Pass(w.ctx, now) }); err != nil && !errors.Is(err, errCaught) {
		return err
	}
	if err := w.startBySweep(n); err != nil || w.failure != nil {
		return err
	}
	w.schedule(time.Second, w.nodeEvent(n, evSweep))
	return nil
}

// sweepCheck is the signal store as a node's sweeper sees it: the waits
// each ExpireSignals call times out (the earliest deadlines first) are
// checked against the model, and applied to it.
type sweepCheck struct {
	spi.SignalStore
	w *world
	n *node
}

func (c sweepCheck) ExpireSignals(ctx context.Context, at time.Time, limit int) ([]spi.ResolvedSignal, error) {
	w := c.w
	now := w.now() // the sweep is at the node's time, whatever it asks
	due := w.waitingJobs(func(j *sjob) bool { return !j.sig.deadline.IsZero() && !j.sig.deadline.After(now) })
	slices.SortStableFunc(due, func(a, b *sjob) int { return a.sig.deadline.Compare(b.sig.deadline) })
	want := due[:min(len(due), limit)]
	got, err := c.SignalStore.ExpireSignals(ctx, at, limit)
	if err != nil {
		return nil, w.storeErr("ExpireSignals", err)
	}
	if len(got) > 0 || len(want) > 0 {
		w.tracef(w.recoveredSig(got), []*node{c.n}, "%s signal sweep -> %s", c.n.id, w.sigList(w.recoveredSig(got)))
	}
	w.checkResolved(c.n.id+"'s signal sweep", want, got, spi.SignalTimedOut, nil, now, []*node{c.n})
	if w.failure != nil {
		return nil, errCaught
	}
	return got, nil
}

func (w *world) recoveredSig(got []spi.ResolvedSignal) []*sjob {
	var out []*sjob
	for _, g := range got {
		if j := w.byID[g.JobID]; j != nil {
			out = append(out, j)
		}
	}
	return out
}

// adminSignal delivers the signal to a job by id (a waiting one, or any
// job with a wait, or with the wrong name) or by key, and checks the
// outcome against the model.
func (w *world) adminSignal(now time.Time) {
	ss := spi.CapabilitiesOf(w.store).Signals
	payload := []byte(fmt.Sprintf(`{"at":%d}`, now.Sub(w.start).Milliseconds()))
	if w.rng.IntN(3) == 0 {
		key := signalKeys[1+w.rng.IntN(len(signalKeys)-1)]
		limit := 1 + w.rng.IntN(3)
		want := w.waitingJobs(func(j *sjob) bool { return j.sig.key == key })
		want = want[:min(len(want), limit)]
		got, err := ss.DeliverSignalByKey(w.ctx, key, signalName, payload, now, limit)
		if err != nil {
			w.fail(invSignalOnce, want, nil, "DeliverSignalByKey(%q, limit %d) failed: %v", key, limit, err)
			return
		}
		w.tracef(append(slices.Clone(want), w.recoveredSig(got)...), nil, "client signal key %s limit %d -> %s", key, limit, w.sigList(w.recoveredSig(got)))
		w.checkResolved("DeliverSignalByKey("+key+")", want, got, spi.SignalDelivered, payload, now, nil)
		return
	}
	var with []*sjob
	for _, j := range w.jobs {
		if j.sig != nil {
			with = append(with, j)
		}
	}
	waiting := w.waitingJobs(func(*sjob) bool { return true })
	var j *sjob
	switch {
	case len(waiting) > 0 && w.rng.IntN(4) != 0:
		j = waiting[w.rng.IntN(len(waiting))]
	case len(with) > 0:
		j = with[w.rng.IntN(len(with))]
	case len(w.jobs) > 0:
		j = w.jobs[w.rng.IntN(len(w.jobs))]
	default:
		return
	}
	name := signalName
	if w.rng.IntN(8) == 0 {
		name = otherName
	}
	r, err := ss.DeliverSignal(w.ctx, j.id, name, payload, now)
	res := "ok"
	if err != nil {
		res = err.Error()
	}
	w.tracef([]*sjob{j}, nil, "client signal %q to %s (%s) -> %s", name, j.label, j.status, res)
	w.check(invSignalOnce)
	allowed := j.status == spi.StatusWaiting && name == signalName
	switch {
	case allowed && err != nil:
		w.fail(invSignalOnce, []*sjob{j}, nil, "signal to %s, which is WAITING for it, failed: %v", j.label, err)
	case !allowed && !errors.Is(err, spi.ErrInvalidState):
		w.fail(invSignalOnce, []*sjob{j}, nil, "signal %q to %s (%s, wait %s) returned %v; expected an error wrapping ErrInvalidState",
			name, j.label, j.status, w.sigList([]*sjob{j}), err)
	}
	if w.failure != nil || !allowed {
		return
	}
	w.checkResolved("DeliverSignal to "+j.label, []*sjob{j}, []spi.ResolvedSignal{r}, spi.SignalDelivered, payload, now, nil)
}

// healSignals delivers, at the heal phase, to every job still waiting.
func (w *world) healSignals() {
	if !w.signalsOn() {
		return
	}
	now := w.now()
	ss := spi.CapabilitiesOf(w.store).Signals
	for _, j := range w.waitingJobs(func(*sjob) bool { return true }) {
		r, err := ss.DeliverSignal(w.ctx, j.id, signalName, nil, now)
		w.tracef([]*sjob{j}, nil, "heal: client signal %q to %s -> %v", signalName, j.label, err)
		if err != nil {
			w.fail(invSignalOnce, []*sjob{j}, nil, "signal to %s, which is WAITING for it, failed: %v", j.label, err)
			return
		}
		w.checkResolved("DeliverSignal to "+j.label, []*sjob{j}, []spi.ResolvedSignal{r}, spi.SignalDelivered, nil, now, nil)
		if w.failure != nil {
			return
		}
	}
}

// compareSignal reports how a stored job's wait differs from the model,
// or "".
func (w *world) compareSignal(j *sjob, g *spi.Job) string {
	if j.sig == nil {
		return ""
	}
	s := g.Signal
	switch {
	case s == nil:
		return "its signal wait is gone"
	case s.Name != signalName || s.Key != j.sig.key || !s.Deadline.Equal(j.sig.deadline):
		return fmt.Sprintf("its wait reads %q key %q deadline %s; it was written %q key %q deadline %s",
			s.Name, s.Key, s.Deadline, signalName, j.sig.key, j.sig.deadline)
	case s.Outcome != j.sig.outcome:
		return fmt.Sprintf("its wait's outcome is %q, expected %q", s.Outcome, j.sig.outcome)
	case j.sig.outcome != "" && !s.ResolvedAt.Equal(j.sig.resolvedAt):
		return fmt.Sprintf("its wait was resolved at %s, expected %s", simtime.Offset(s.ResolvedAt.Sub(w.start)), simtime.Offset(j.sig.resolvedAt.Sub(w.start)))
	case !bytes.Equal(s.Payload, j.sig.payload):
		return fmt.Sprintf("its wait's payload is %q, expected %q", s.Payload, j.sig.payload)
	}
	return ""
}

// checkSignals is the final check of signal-once: every wait was resolved,
// once.
func (w *world) checkSignals() {
	for _, j := range w.jobs {
		if j.sig == nil {
			continue
		}
		w.check(invSignalOnce)
		if j.sig.resolutions != 1 || j.sig.outcome == "" {
			w.fail(invSignalOnce, []*sjob{j}, nil, "the wait of %s was resolved %d times (outcome %q)", j.label, j.sig.resolutions, j.sig.outcome)
			return
		}
	}
}

// timeoutsAhead reports whether a job waits for a signal with a deadline:
// its timeout would make it due while the aging probe runs (the admin
// workload, which delivers to the others, pauses then).
func (w *world) timeoutsAhead() bool {
	for _, j := range w.jobs {
		if j.status == spi.StatusWaiting && !j.sig.deadline.IsZero() {
			return true
		}
	}
	return false
}
