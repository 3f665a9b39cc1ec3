package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/simtest/internal/simtime"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// simTasks are the tasks every simulated node runs: all the workload
// submits.
var simTasks = []string{"flood", "poison", "probe", "work"}

// A node mirrors what engine.Engine does, one action per step: it polls
// with an adaptive delay and claims up to its free slots with its tag
// filter, runs each job for a simulated time, decides the outcome of a
// failure with engine.DecideRetry, buffers completions and writes them in
// one fenced batch, heartbeats (then, where the store is a ClaimChecker,
// cancels the bodies of jobs taken away from it), scans for orphans, and
// on a graceful stop stops claiming but keeps heartbeating while it drains
// (as Engine.Stop does),
// drains up to a timeout and releases the rest. It restarts under the same
// id, recovering its own jobs first. Not modelled: wakeups between nodes
// (a ClusterCoordinator only shortens poll delays).

type nodeState int

const (
	nodeUp nodeState = iota
	nodeStopping
	nodeStopped
	nodeCrashed
)

type node struct {
	idx   int
	id    string
	inc   int // incarnation: events of an earlier one are dropped
	state nodeState
	slots int

	stallUntil time.Time     // non-zero while frozen
	tags       spi.TagFilter // tag affinity passed with every claim

	execs   map[spi.ClaimRef]*exec // claimed and running, as the node believes
	pending []pendingWrite         // finished, completion not yet written

	// stopClean is true while a graceful stop runs undisturbed: it began
	// with a fresh heartbeat and no stall or clock jump happened since. Its
	// jobs must then never be recovered (only released).
	stopClean bool

	pollGen       int
	pollDelay     time.Duration
	flushQueued   bool
	restartQueued bool
}

type exec struct {
	job  *sjob
	snap *spi.Job // the job as the claim returned it
	ref  spi.ClaimRef
}

type pendingWrite struct {
	job *sjob
	c   spi.Completion
}

func (n *node) stalled() bool { return !n.stallUntil.IsZero() }

// believes reports whether the node thinks it owns ref: running it, or
// holding its unwritten completion.
func (n *node) believes(ref spi.ClaimRef) bool {
	if _, ok := n.execs[ref]; ok {
		return true
	}
	for _, p := range n.pending {
		if p.c.ClaimRef == ref {
			return true
		}
	}
	return false
}

// beliefs lists what the node believes it owns, in a stable order.
func (n *node) beliefs() []*exec {
	out := make([]*exec, 0, len(n.execs)+len(n.pending))
	for _, x := range n.execs {
		out = append(out, x)
	}
	for _, p := range n.pending {
		out = append(out, &exec{job: p.job, ref: p.c.ClaimRef})
	}
	slices.SortFunc(out, func(a, b *exec) int {
		if c := bytes.Compare(a.ref.JobID[:], b.ref.JobID[:]); c != 0 {
			return c
		}
		return int(a.ref.ClaimSeq - b.ref.ClaimSeq)
	})
	return out
}

func (n *node) runningExecs() []*exec {
	out := make([]*exec, 0, len(n.execs))
	for _, x := range n.execs {
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b *exec) int { return a.job.idx - b.job.idx })
	return out
}

func (w *world) refsOf(xs []*exec) string {
	if len(xs) == 0 {
		return "nothing"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%s/%d", x.job.label, x.ref.ClaimSeq)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func jobsOf(xs []*exec) []*sjob {
	out := make([]*sjob, len(xs))
	for i, x := range xs {
		out[i] = x.job
	}
	return out
}

func (w *world) nodeEvent(n *node, kind evKind) *event {
	return &event{kind: kind, node: n.idx, inc: n.inc}
}

// queuePoll makes the node poll d from now; an earlier queued poll is
// forgotten (the engine's wakeup channel).
func (w *world) queuePoll(n *node, d time.Duration) {
	n.pollGen++
	e := w.nodeEvent(n, evPoll)
	e.ref.ClaimSeq = int64(n.pollGen)
	w.schedule(d, e)
}

// live reports whether a popped event still matters, so that forgotten
// polls do not count as steps.
func (w *world) live(ev *event) bool {
	if ev.node < 0 {
		return true
	}
	n := w.nodes[ev.node]
	if ev.inc != n.inc {
		return false
	}
	if ev.kind == evPoll && int(ev.ref.ClaimSeq) != n.pollGen {
		return false
	}
	return true
}

// startNode is Engine.Start: recover the jobs an earlier run of this node
// id left RUNNING, register with a heartbeat, start polling.
func (w *world) startNode(n *node) error {
	n.inc++
	n.state = nodeUp
	n.stallUntil = time.Time{}
	n.execs = map[spi.ClaimRef]*exec{}
	n.pending = nil
	n.flushQueued, n.restartQueued = false, false
	n.pollDelay = w.sc.MinPollInterval
	now := w.now()
	p := spi.RecoverParams{Now: now, Grace: w.sc.OrphanGrace, MaxCrashRedeliveries: w.maxCrash, Nodes: []string{n.id}, LastError: recoveryMessage}
	got, err := w.store.RecoverOrphans(w.ctx, p)
	if err != nil {
		return w.storeErr("RecoverOrphans", err)
	}
	rec := w.recoveredJobs(got)
	w.checkRecover(n, p, got)
	if err := w.store.Heartbeat(w.ctx, n.id, now); err != nil {
		return w.storeErr("Heartbeat", err)
	}
	w.nodeRows[n.id] = now
	w.tracef(rec, []*node{n}, "%s starts (incarnation %d, %d slots), recovering %s", n.id, n.inc, n.slots, describeRecovered(w, got))
	w.queuePoll(n, 0)
	w.schedule(w.sc.HeartbeatInterval, w.nodeEvent(n, evHeartbeat))
	w.schedule(w.randDur(w.sc.OrphanScanInterval/2, w.sc.OrphanScanInterval), w.nodeEvent(n, evScan))
	return nil
}

func (w *world) recoveredJobs(got []spi.RecoveredJob) []*sjob {
	var out []*sjob
	for _, g := range got {
		if j := w.byID[g.JobID]; j != nil {
			out = append(out, j)
		}
	}
	return out
}

func describeRecovered(w *world, got []spi.RecoveredJob) string {
	if len(got) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(got))
	for _, g := range got {
		label := g.JobID.String()
		if j := w.byID[g.JobID]; j != nil {
			label = j.label
		}
		parts = append(parts, fmt.Sprintf("%s from %s -> %s crash=%d", label, g.FromNode, g.NewStatus, g.CrashCount))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// jobDuration picks how long a job body runs.
func (w *world) jobDuration(j *sjob) time.Duration {
	if j.flood {
		return w.randDur(300*time.Millisecond, 1500*time.Millisecond)
	}
	switch r := w.rng.IntN(100); {
	case r < 85:
		return w.randDur(10*time.Millisecond, 800*time.Millisecond)
	case r < 95:
		return w.randDur(time.Second, 4*time.Second)
	default:
		return w.randDur(5*time.Second, 15*time.Second) // longer than the grace: heartbeats keep it owned
	}
}

// poll claims up to the node's free slots.
func (w *world) poll(n *node) error {
	if n.state != nodeUp {
		return nil
	}
	free := n.slots - len(n.execs)
	if free <= 0 {
		return nil // a finishing body wakes the poller
	}
	if w.phase == phaseMain && w.chance(w.sc.Faults.CrashAtHook) {
		return w.crash(n, "crash:before-claim")
	}
	limit := free
	now := w.now()
	if w.probe != nil && w.probe.active && n.tags.Match(nil) {
		// only nodes that may run the probe (untagged) count for its bound
		if err := w.floodTopUp(limit); err != nil {
			return err
		}
		w.probe.claimCall(now)
	}
	got, err := w.store.ClaimJobs(w.ctx, spi.ClaimParams{NodeID: n.id, Limit: limit, Now: now, BoostInterval: w.sc.BoostInterval, Tags: n.tags, Tasks: simTasks})
	if err != nil {
		return w.storeErr("ClaimJobs", err)
	}
	w.report.Claims++
	w.report.Claimed += len(got)
	claimed := w.checkClaim(n, limit, now, got)
	if w.failure != nil {
		w.tracef(claimed, []*node{n}, "%s claim limit=%d -> %d jobs", n.id, limit, len(got))
		return nil
	}
	var xs []*exec
	for i, j := range claimed {
		x := &exec{job: j, snap: got[i], ref: spi.ClaimRef{JobID: j.id, ClaimSeq: got[i].ClaimSeq}}
		n.execs[x.ref] = x
		xs = append(xs, x)
	}
	if len(got) > 0 {
		w.tracef(claimed, []*node{n}, "%s claim limit=%d -> %s", n.id, limit, w.refsOf(xs))
	} else {
		w.tracef(nil, []*node{n}, "%s claim limit=%d -> nothing", n.id, limit)
	}
	for _, x := range xs {
		if x.job.poison {
			e := w.nodeEvent(n, evNodeCrash)
			e.ref, e.why = x.ref, "poison-crash"
			w.schedule(w.randDur(10*time.Millisecond, 200*time.Millisecond), e)
			continue
		}
		e := w.nodeEvent(n, evBodyDone)
		e.ref = x.ref
		w.schedule(w.jobDuration(x.job), e)
	}
	if w.probe != nil && w.probe.active {
		for _, j := range claimed {
			if j == w.probe.job {
				w.probeClaimed(now)
			}
		}
	}
	if w.phase == phaseMain && len(got) > 0 && w.chance(w.sc.Faults.CrashAtHook) {
		return w.crash(n, "crash:after-claim")
	}
	if len(got) == limit {
		return nil // no free slot left
	}
	wait := n.pollDelay
	if len(got) > 0 {
		n.pollDelay = w.sc.MinPollInterval
		wait = n.pollDelay
	} else {
		n.pollDelay = min(2*n.pollDelay, w.sc.PollInterval)
	}
	w.queuePoll(n, w.randDur(wait*3/4, wait))
	return nil
}

var (
	errTransient = errors.New("transient failure: upstream timed out")
	errPermanent = ratchet.DoNotRetry(errors.New("permanent failure: invalid input"))
	sanitizer    = ratchet.DefaultSanitizer{}
)

// bodyDone ends one execution: the outcome is drawn from the seeded RNG and
// a failure is decided by the engine's own DecideRetry.
func (w *world) bodyDone(n *node, ref spi.ClaimRef) error {
	x := n.execs[ref]
	if x == nil {
		return nil // released meanwhile
	}
	delete(n.execs, ref)
	var err error
	if !x.job.flood && !x.job.probe {
		switch r := w.rng.IntN(100); {
		case r < 70:
		case r < 95:
			err = errTransient
		default:
			err = errPermanent
		}
	}
	c := w.completion(x, err)
	n.pending = append(n.pending, pendingWrite{job: x.job, c: c})
	w.tracef([]*sjob{x.job}, []*node{n}, "%s body %s/%d -> %s", n.id, x.job.label, ref.ClaimSeq, w.describeCompletion(c))
	if w.phase == phaseMain && w.chance(w.sc.Faults.CrashAtHook) {
		return w.crash(n, "crash:before-completion")
	}
	if !n.flushQueued {
		n.flushQueued = true
		w.schedule(w.randDur(0, 30*time.Millisecond), w.nodeEvent(n, evFlush))
	}
	switch n.state {
	case nodeUp:
		n.pollDelay = w.sc.MinPollInterval
		w.queuePoll(n, 0)
	case nodeStopping:
		if len(n.execs) == 0 {
			return w.finishStop(n, "stop:drained")
		}
	}
	return nil
}

// completion builds the owner write that ends an execution, as
// Engine.execute does.
func (w *world) completion(x *exec, err error) spi.Completion {
	now := w.now()
	c := spi.Completion{ClaimRef: x.ref, FinishedAt: now}
	if err == nil {
		c.Outcome = spi.OutcomeSucceeded
		c.Result = []byte(fmt.Sprintf(`{"job":%d}`, x.job.idx+1))
		c.ResultType = "simtest.result"
		c.Attempts = x.snap.Attempts + 1
		return c
	}
	d := engine.DecideRetry(x.snap, err, w.policy, now)
	c.Attempts = d.Attempt
	c.LastError = sanitizer.Sanitize(err)
	if d.Retry {
		c.Outcome, c.RetryAt = spi.OutcomeRetry, d.RetryAt
	} else {
		c.Outcome = spi.OutcomeFailed
	}
	w.checkRetryPath(x.job, x.snap, err, c)
	return c
}

func (w *world) describeCompletion(c spi.Completion) string {
	switch c.Outcome {
	case spi.OutcomeSucceeded:
		return "success"
	case spi.OutcomeRetry:
		return fmt.Sprintf("error %q, attempt %d, retry at %s", c.LastError, c.Attempts, simtime.Offset(c.RetryAt.Sub(w.start)))
	default:
		return fmt.Sprintf("error %q, attempt %d, to the DLQ", c.LastError, c.Attempts)
	}
}

// flush writes the node's buffered completions in one fenced batch.
func (w *world) flush(n *node) error {
	n.flushQueued = false
	if len(n.pending) == 0 {
		return nil
	}
	batch := n.pending
	n.pending = nil
	cs := make([]spi.Completion, len(batch))
	js := make([]*sjob, len(batch))
	for i, p := range batch {
		cs[i], js[i] = p.c, p.job
	}
	applied, err := w.store.CompleteJobs(w.ctx, slices.Clone(cs))
	if err != nil {
		return w.storeErr("CompleteJobs", err)
	}
	w.report.Completions += len(cs)
	parts := make([]string, len(cs))
	for i, c := range cs {
		res := "applied"
		if i < len(applied) && !applied[i] {
			res = "superseded"
		}
		parts[i] = fmt.Sprintf("%s/%d %s", js[i].label, c.ClaimSeq, res)
	}
	w.tracef(js, []*node{n}, "%s complete [%s]", n.id, strings.Join(parts, ", "))
	w.checkComplete(n, cs, applied)
	return nil
}

func (w *world) heartbeat(n *node) error {
	if n.state != nodeUp && n.state != nodeStopping {
		return nil // Engine.Stop heartbeats through its drain, then ends the loop
	}
	now := w.now()
	if err := w.store.Heartbeat(w.ctx, n.id, now); err != nil {
		return w.storeErr("Heartbeat", err)
	}
	w.nodeRows[n.id] = now
	w.tracef(nil, []*node{n}, "%s heartbeat", n.id)
	w.schedule(w.sc.HeartbeatInterval, w.nodeEvent(n, evHeartbeat))
	return w.checkClaims(n)
}

// checkClaims is the second half of the engine's heartbeat: where the
// store implements spi.ClaimChecker, the bodies of jobs recovered from
// under the node are cancelled; their completions must be superseded.
func (w *world) checkClaims(n *node) error {
	cc := spi.CapabilitiesOf(w.store).Claims
	if cc == nil || len(n.execs) == 0 {
		return nil
	}
	running := n.runningExecs()
	refs := make([]spi.ClaimRef, len(running))
	for i, x := range running {
		refs[i] = x.ref
	}
	current, err := cc.CheckClaims(w.ctx, slices.Clone(refs))
	if err != nil {
		return w.storeErr("CheckClaims", err)
	}
	if len(current) != len(refs) {
		w.fail(invClaimCheck, nil, []*node{n}, "CheckClaims returned %d results for %d refs", len(current), len(refs))
		return nil
	}
	var lost []*exec
	for i, x := range running {
		w.check(invClaimCheck)
		want := x.job.status == spi.StatusRunning && x.job.seq == x.ref.ClaimSeq
		if current[i] != want {
			w.fail(invClaimCheck, []*sjob{x.job}, []*node{n}, "CheckClaims says claim %d of %s is current=%v, but the job is %s with claim %d",
				x.ref.ClaimSeq, x.job.label, current[i], x.job.status, x.job.seq)
			return nil
		}
		if !current[i] {
			lost = append(lost, x)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	w.tracef(jobsOf(lost), []*node{n}, "%s claim check: %s were taken away; cancelling their bodies", n.id, w.refsOf(lost))
	for _, x := range lost {
		delete(n.execs, x.ref)
		n.pending = append(n.pending, pendingWrite{job: x.job, c: w.completion(x, context.Canceled)})
	}
	if !n.flushQueued {
		n.flushQueued = true
		w.schedule(w.randDur(0, 30*time.Millisecond), w.nodeEvent(n, evFlush))
	}
	if n.state == nodeUp {
		w.queuePoll(n, 0)
	}
	return nil
}

func (w *world) scan(n *node) error {
	if n.state != nodeUp {
		return nil
	}
	p := spi.RecoverParams{Now: w.now(), Grace: w.sc.OrphanGrace, MaxCrashRedeliveries: w.maxCrash, LastError: recoveryMessage}
	got, err := w.store.RecoverOrphans(w.ctx, p)
	if err != nil {
		return w.storeErr("RecoverOrphans", err)
	}
	rec := w.recoveredJobs(got)
	w.tracef(rec, []*node{n}, "%s orphan scan -> %s", n.id, describeRecovered(w, got))
	w.checkRecover(n, p, got)
	w.schedule(w.sc.OrphanScanInterval, w.nodeEvent(n, evScan))
	return nil
}

// crash kills the node: everything it held in memory is gone, its row
// stays until it goes stale.
func (w *world) crash(n *node, kind string) error {
	w.report.Faults[kind]++
	held := n.beliefs()
	w.tracef(jobsOf(held), []*node{n}, "FAULT %s: %s dies holding %s", kind, n.id, w.refsOf(held))
	n.inc++
	n.state = nodeCrashed
	n.stallUntil = time.Time{}
	n.execs = map[spi.ClaimRef]*exec{}
	n.pending = nil
	n.flushQueued = false
	n.restartQueued = false
	n.restartQueued = true
	d := w.randDur(200*time.Millisecond, 20*time.Second)
	switch {
	case w.phase == phaseHeal:
		d = w.randDur(200*time.Millisecond, 2*time.Second)
	case w.rng.IntN(10) == 0:
		d = w.randDur(time.Minute, 5*time.Minute) // a long outage
	}
	w.schedule(d, w.nodeEvent(n, evRestart))
	return nil
}

// poisonCrash is a poison job killing the node that runs it.
func (w *world) poisonCrash(n *node, ref spi.ClaimRef) error {
	if n.execs[ref] == nil {
		return nil // released before it could do harm
	}
	return w.crash(n, "poison-crash")
}

// stop begins a graceful stop.
func (w *world) stop(n *node) error {
	n.state = nodeStopping
	hb, ok := w.nodeRows[n.id]
	n.stopClean = ok && w.now().Sub(hb) <= w.sc.HeartbeatInterval
	timeout := w.sc.DrainTimeout
	if timeout <= 0 {
		timeout = w.randDur(500*time.Millisecond, max(500*time.Millisecond, w.sc.OrphanGrace-2*w.sc.HeartbeatInterval))
	}
	running := n.runningExecs()
	w.tracef(jobsOf(running), []*node{n}, "FAULT stop: %s stops claiming and drains %s (timeout %s)", n.id, w.refsOf(running), timeout)
	if len(running) == 0 {
		return w.finishStop(n, "stop:drained")
	}
	w.schedule(timeout, w.nodeEvent(n, evDrainLimit))
	return nil
}

// drainTimeout releases what a stopping node still runs; the cancelled
// bodies then end with the context's error, and their completions, written
// with the final flush, must be superseded.
func (w *world) drainTimeout(n *node) error {
	if n.state != nodeStopping {
		return nil
	}
	running := n.runningExecs()
	refs := make([]spi.ClaimRef, len(running))
	for i, x := range running {
		refs[i] = x.ref
	}
	now := w.now()
	applied, err := w.store.ReleaseJobs(w.ctx, slices.Clone(refs), now)
	if err != nil {
		return w.storeErr("ReleaseJobs", err)
	}
	w.tracef(jobsOf(running), []*node{n}, "%s drain timed out: releases %s -> %v", n.id, w.refsOf(running), applied)
	w.checkRelease(n, refs, applied, now)
	if w.failure != nil {
		return nil
	}
	for _, x := range running {
		delete(n.execs, x.ref)
		c := w.completion(x, context.Canceled)
		n.pending = append(n.pending, pendingWrite{job: x.job, c: c})
	}
	return w.finishStop(n, "stop:drain-timeout")
}

// finishStop flushes the completions, removes the node's row and ends the
// process.
func (w *world) finishStop(n *node, kind string) error {
	w.report.Faults[kind]++
	if err := w.flush(n); err != nil || w.failure != nil {
		return err
	}
	if err := w.store.DeregisterNode(w.ctx, n.id); err != nil {
		return w.storeErr("DeregisterNode", err)
	}
	delete(w.nodeRows, n.id)
	w.tracef(nil, []*node{n}, "%s stopped (%s)", n.id, kind)
	n.inc++
	n.state = nodeStopped
	n.restartQueued = true
	d := w.randDur(time.Second, 20*time.Second)
	if w.phase == phaseHeal {
		d = w.randDur(200*time.Millisecond, 2*time.Second)
	}
	w.schedule(d, w.nodeEvent(n, evRestart))
	return nil
}

// injectFaults draws the faults of one step.
func (w *world) injectFaults() error {
	f := w.sc.Faults
	pick := func(ok func(*node) bool) *node {
		var c []*node
		for _, n := range w.nodes {
			if ok(n) {
				c = append(c, n)
			}
		}
		if len(c) == 0 {
			return nil
		}
		return c[w.rng.IntN(len(c))]
	}
	alive := func(n *node) bool { return n.state == nodeUp || n.state == nodeStopping }
	if w.chance(f.Crash) {
		if n := pick(alive); n != nil {
			kind := "crash:idle"
			switch {
			case len(n.execs) > 0:
				kind = "crash:mid-execution"
			case len(n.pending) > 0:
				kind = "crash:before-completion"
			}
			if n.stalled() {
				kind += "(stalled)"
			}
			if err := w.crash(n, kind); err != nil {
				return err
			}
		}
	}
	if w.chance(f.Stall) {
		if n := pick(func(n *node) bool { return alive(n) && !n.stalled() }); n != nil {
			kind := "stall>grace"
			d := w.randDur(w.sc.OrphanGrace+w.sc.OrphanScanInterval, 3*w.sc.OrphanGrace+w.sc.OrphanScanInterval)
			if w.rng.IntN(2) == 0 {
				kind = "stall<grace"
				d = w.randDur(100*time.Millisecond, max(100*time.Millisecond, w.sc.OrphanGrace-2*w.sc.HeartbeatInterval))
			}
			w.report.Faults[kind]++
			n.stallUntil = w.now().Add(d)
			n.stopClean = false
			held := n.beliefs()
			w.tracef(jobsOf(held), []*node{n}, "FAULT %s: %s freezes for %s holding %s", kind, n.id, d, w.refsOf(held))
			w.schedule(d, w.nodeEvent(n, evResume))
		}
	}
	if w.chance(f.Stop) {
		if n := pick(func(n *node) bool { return n.state == nodeUp && !n.stalled() }); n != nil {
			if err := w.stop(n); err != nil {
				return err
			}
		}
	}
	if w.chance(f.ClockJump) {
		d := w.randDur(time.Second, 30*time.Second)
		w.report.Faults["clock-jump"]++
		w.clock.Advance(d)
		for _, n := range w.nodes {
			n.stopClean = false
		}
		w.tracef(nil, nil, "FAULT clock-jump: the clock jumps %s forward", d)
	}
	return nil
}
