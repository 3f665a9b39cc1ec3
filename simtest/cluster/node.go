package cluster

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// simTasks are the tasks every simulated node runs: all the workload
// submits.
var simTasks = []string{"flood", "poison", "probe", "work"}

// A node is one engine on the simulator's event loop, one action per step.
// Its decisions are the engine's own code (engineCode): each poll asks the
// engine's PollPolicy whether to wait for a free slot, gather more free
// slots, refresh a stale heartbeat or claim (never more than the free slots
// nor a batch), and waits as the engine's AdaptivePolling says; an
// execution ends with the engine's CompletionOf (the retry decision, the
// fence); completions are written in the completer's batches (NextBatch);
// a graceful stop runs the engine's StopOrder step by step. What the node
// does itself is only the I/O around them: store calls, a body's simulated
// run time, the heartbeat's claim check (the bodies of jobs taken away are
// cancelled), orphan scans, and restarts under the same id, recovering its
// own jobs first. Not modelled: wakeups between nodes (a ClusterCoordinator
// only shortens poll delays).

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

	policy   nodecore.PollPolicy // slots, claim batch, gather timeout, heartbeat interval
	claimers int                 // claims in flight at most
	batch    int                 // the completer's batch size

	stallUntil    time.Time     // non-zero while frozen
	beatFailUntil time.Time     // heartbeat writes fail until then (an outage)
	tags          spi.TagFilter // tag affinity passed with every claim

	execs map[spi.ClaimRef]*exec // claimed and running, as the node believes
	// The engine's parts of this incarnation (newParts): the heartbeater
	// (its beat and claim check), the rescuer and the completer, and the
	// write the completer holds while it waits out its retry backoff.
	hb        *nodecore.Heartbeater
	rescuer   nodecore.Rescuer
	completer *nodecore.Completer
	retry     *heldWrite
	lost      []*exec        // bodies the claim check cancelled, in this tick
	stale     []spi.ClaimRef // the claims the last claim check found no longer current
	claimer   *nodecore.Claimer
	// limits are the node's per-task limits (nil: none), tasks their
	// counts in this incarnation.
	limits map[string]int
	runs   *nodecore.Runs // the executor's accounting (newParts)
	forced bool           // starting a job that could not be given back, past its limit
	// The limit and the free slots of the claim in progress, for the
	// check of its dispatch.
	claimLimit, claimFree int

	completeFailUntil time.Time // completion writes fail until then (an outage)
	claimFailUntil    time.Time // claims fail until then (an outage)
	starting          bool      // while the start recovers the node's own jobs

	// stopClean is true while a graceful stop runs undisturbed: it began
	// with a fresh heartbeat and no stall or clock jump happened since. Its
	// jobs must then never be recovered (only released).
	stopClean bool

	// Per incarnation: the poll loop (nodecore.PollLoop: the policy, the
	// strategy, the gather, the claims in flight), the
	// parts still running, and the graceful stop's progress.
	loop              *nodecore.PollLoop
	claiming, beating bool
	stopSteps         []nodecore.StopStep
	stopAt            int
	draining          bool
	drainTimeout      time.Duration
	stopKind          string

	pollGen       int
	flushQueued   bool
	restartQueued bool
}

type exec struct {
	job  *sjob
	snap *spi.Job // the job as the claim returned it
	ref  spi.ClaimRef
	// cancelled: the claim check cancelled the body, which ends soon with
	// the context's error, holding its slot until then.
	cancelled bool
	// expired: the run went past its timeout; its failure was written
	// then, and the body's return writes nothing.
	expired bool
}

// heldWrite is a batch of the completer's whose write failed, tried again
// after backoff.
type heldWrite struct {
	batch   []nodecore.Pending
	logs    []spi.LogAppend
	backoff time.Duration
}

// unwritten are the completions the node holds: queued in its completer,
// or held for a retry.
func (n *node) unwritten() []nodecore.Pending {
	if n.completer == nil {
		return nil
	}
	out := n.completer.Queued()
	if n.retry != nil {
		out = append(out, n.retry.batch...)
	}
	return out
}

// refOf is the claim an unwritten completion ends: its job's, as claimed.
func refOf(p nodecore.Pending) spi.ClaimRef {
	return spi.ClaimRef{JobID: p.Job.ID, ClaimSeq: p.Job.ClaimSeq}
}

func (n *node) stalled() bool { return !n.stallUntil.IsZero() }

// fullTasks are the tasks whose jobs the node runs up to their limit: a
// claim must not take them.
func (n *node) fullTasks() map[string]bool {
	var full map[string]bool
	for task, limit := range n.limits {
		running := 0
		for _, x := range n.execs {
			if x.job.task == task {
				running++
			}
		}
		if running >= limit {
			if full == nil {
				full = map[string]bool{}
			}
			full[task] = true
		}
	}
	return full
}

// endExec ends an execution: its slot, and its task's, are free again
// (nodecore.Runs.End). It reports whether its end is to be written: not
// when a drain released its claim, nor after its run expired.
func (n *node) endExec(x *exec) (owed bool) {
	delete(n.execs, x.ref)
	owed, _ = n.runs.End(x.snap)
	return owed
}

// believes reports whether the node thinks it owns ref: running it, or
// holding its unwritten completion.
func (n *node) believes(ref spi.ClaimRef) bool {
	if _, ok := n.execs[ref]; ok {
		return true
	}
	for _, p := range n.unwritten() {
		if refOf(p) == ref {
			return true
		}
	}
	return false
}

// beliefs lists what the node believes it owns, in a stable order.
func (w *world) beliefs(n *node) []*exec {
	un := n.unwritten()
	out := make([]*exec, 0, len(n.execs)+len(un))
	for _, x := range n.execs {
		out = append(out, x)
	}
	for _, p := range un {
		out = append(out, &exec{job: w.byID[p.Job.ID], ref: refOf(p)})
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
	w.newParts(n)
	n.flushQueued, n.restartQueued = false, false
	n.beatFailUntil, n.completeFailUntil, n.claimFailUntil = time.Time{}, time.Time{}, time.Time{} // a new process, a new connection
	n.loop = &nodecore.PollLoop{Policy: n.policy, Claimers: n.claimers,
		Strategy: nodecore.AdaptivePolling(spi.PollConfig{MinInterval: w.sc.MinPollInterval, MaxInterval: w.sc.PollInterval})}
	n.claiming, n.beating = true, true
	n.stopSteps, n.stopAt, n.draining = nil, 0, false
	w.tracef(nil, []*node{n}, "%s starts (incarnation %d, %d slots)", n.id, n.inc, n.slots)
	n.starting = true
	_, err := n.rescuer.Recover(w.ctx, []string{n.id})
	n.starting = false
	if err != nil {
		return w.ioFailure(err)
	}
	if err := n.hb.Register(w.ctx); err != nil {
		return w.ioFailure(err)
	}
	w.queuePoll(n, 0)
	w.schedule(w.sc.HeartbeatInterval, w.nodeEvent(n, evHeartbeat))
	w.schedule(w.randDur(w.sc.OrphanScanInterval/2, w.sc.OrphanScanInterval), w.nodeEvent(n, evScan))
	if w.rec != nil {
		w.schedule(w.randDur(0, time.Second), w.nodeEvent(n, evRecurring))
	}
	if w.signalsOn() {
		w.schedule(w.randDur(0, time.Second), w.nodeEvent(n, evSweep))
	}
	if w.batchesOn() {
		w.schedule(w.randDur(0, time.Second), w.nodeEvent(n, evBatchFinish))
	}
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

// poll is one decision of the engine's poll loop (nodecore.PollLoop),
// carried out.
func (w *world) poll(n *node) error {
	if !n.claiming || (n.state != nodeUp && n.state != nodeStopping) {
		return nil
	}
	st := n.loop.Next(w.now(), n.runs.Free(), n.hb.LastBeat())
	switch st.Kind {
	case nodecore.StepIdle, nodecore.StepAwaitClaim:
		return nil // a finishing body, or the claim in flight, wakes the poller
	case nodecore.StepGather:
		if st.NewGather {
			w.tracef(nil, []*node{n}, "%s waits up to %s for more free slots (%d of %d free)", n.id, st.Wait, n.slots-len(n.execs), n.slots)
		}
		w.queuePoll(n, st.Wait)
		return nil
	case nodecore.StepBeat:
		ok := n.hb.Beat(w.ctx)
		if w.ioErr != nil {
			return w.ioFailure(w.ioErr)
		}
		var wait time.Duration
		if !ok {
			wait = n.loop.BeatFailed()
		}
		w.queuePoll(n, wait)
		return nil
	case nodecore.StepStartClaim:
		// The claim is at the store for a while; the loop decides again
		// meanwhile, and may start another on the slots left.
		w.report.MaxClaimsInFlight = max(w.report.MaxClaimsInFlight, n.loop.InFlight())
		e := w.nodeEvent(n, evClaimDone)
		e.limit = st.Limit
		w.schedule(w.randDur(time.Millisecond, 30*time.Millisecond), e)
		w.queuePoll(n, 0)
		return nil
	}
	return w.claim(n, st.Limit, false)
}

// claim is one claim of the engine's claim step (nodecore.Claimer), which
// starts what it claimed (startJob), then queues the next poll after the
// strategy's delay; inFlight: a claim the loop started in flight, which it
// settles.
func (w *world) claim(n *node, limit int, inFlight bool) error {
	if !inFlight && w.phase == phaseMain && w.chance(w.sc.Faults.CrashAtHook) {
		return w.crash(n, "crash:before-claim")
	}
	if inFlight && !n.claiming {
		// The stop cancelled it before it reached the store.
		n.loop.Settle(nodecore.ClaimOutcome{Asked: limit, Stopped: true})
		return nil
	}
	n.claimLimit, n.claimFree = limit, n.slots-len(n.execs)
	o := n.claimer.ClaimOnce(w.ctx, limit)
	if err := w.ioFailure(o.Res.Err); err != nil || w.failure != nil {
		return err
	}
	var wait time.Duration
	switch {
	case inFlight:
		wait = n.loop.Settle(o)
	case o.Gated: // a gate kept the claim from the store: its wait, or a freed slot
		if o.GateWait > 0 {
			w.queuePoll(n, o.GateWait)
		}
		return nil
	default:
		wait = n.loop.Waited(o)
	}
	if w.phase == phaseMain && o.Res.Claimed > 0 && w.chance(w.sc.Faults.CrashAtHook) {
		return w.crash(n, "crash:after-claim")
	}
	if wait > 0 {
		wait = w.randDur(wait*3/4, wait) // the claim's own latency and scheduling
	}
	w.queuePoll(n, wait)
	return nil
}

// startJob is the claim step's dispatch of one claimed job: the node runs it
// (after the workflow gate), its body ending after a drawn time, or, for a
// poison job, crashing the node.
func (w *world) startJob(n *node, snap *spi.Job) {
	j := w.byID[snap.ID]
	if w.failure != nil || j == nil {
		return
	}
	x := &exec{job: j, snap: snap, ref: spi.ClaimRef{JobID: j.id, ClaimSeq: snap.ClaimSeq}}
	n.execs[x.ref] = x
	n.runs.Start(snap, func() { n.lost = append(n.lost, x) }) // the claim check's or a drain's cancel
	w.check(invSlots)
	if len(n.execs) > n.slots {
		w.fail(invSlots, []*sjob{j}, []*node{n}, "%s runs %d bodies on %d slots: its poller claimed with a limit of %d and %d slots free",
			n.id, len(n.execs), n.slots, n.claimLimit, n.claimFree)
		return
	}
	if limit, ok := n.limits[j.task]; ok && !n.forced {
		same := 0
		for _, o := range n.execs {
			if o.job.task == j.task {
				same++
			}
		}
		if same > limit {
			w.fail(invSlots, []*sjob{j}, []*node{n}, "%s runs %d jobs of task %s, whose limit on the node is %d", n.id, same, j.task, limit)
			return
		}
	}
	if expired, err := w.expireUnstarted(n, x); err != nil || expired {
		w.ioErr = err
		return
	}
	run, err := w.dispatch(n, x)
	switch {
	case err != nil:
		w.ioErr = err
		return
	case !run || w.failure != nil:
		return // the gate queued its SKIPPED or CANCELLED write
	case j.poison:
		e := w.nodeEvent(n, evNodeCrash)
		e.ref, e.why = x.ref, "poison-crash"
		w.schedule(w.randDur(10*time.Millisecond, 200*time.Millisecond), e)
		return
	}
	e := w.nodeEvent(n, evBodyDone)
	e.ref = x.ref
	w.schedule(w.jobDuration(j), e)
	if d, _ := nodecore.Timeout(snap, 0); d > 0 {
		t := w.nodeEvent(n, evTimeout)
		t.ref = x.ref
		w.schedule(d, t)
	}
}

// expireUnstarted is the claim's start-by decision (nodecore.Expired),
// checked against the job's deadline: a job claimed past it fails with
// ErrExpired in place of its body, and its slot frees. It reports whether
// the job expired (or the check failed).
func (w *world) expireUnstarted(n *node, x *exec) (bool, error) {
	j, now := x.job, w.now()
	expired := nodecore.Expired(x.snap, now)
	if by := j.deadline(); !by.IsZero() {
		w.check(invStartBy)
		if late := now.After(by); late != (expired != nil) || (late && !errors.Is(expired, ratchet.ErrExpired)) {
			w.fail(invStartBy, []*sjob{j}, []*node{n}, "%s claimed %s/%d at %s, its start-by deadline %s: the engine's decision is %v",
				n.id, j.label, x.ref.ClaimSeq, simtime.Offset(now.Sub(w.start)), simtime.Offset(by.Sub(w.start)), expired)
			return true, nil
		}
	}
	if expired == nil {
		return false, nil
	}
	n.endExec(x)
	c := w.complete(n, x, expired, spi.AttemptExpired)
	w.tracef([]*sjob{j}, []*node{n}, "%s claim %s/%d past its start-by deadline -> %s", n.id, j.label, x.ref.ClaimSeq, w.describeCompletion(c))
	w.queueFlush(n)
	return true, w.freed(n)
}

// deadline is the time by which a run of j must start in the model: its
// start-by deadline, or its due time plus its window; zero for none.
func (j *sjob) deadline() time.Time {
	if j.startWithin > 0 {
		return j.due.Add(j.startWithin)
	}
	return j.startBy
}

// expire is a run's timeout on the engine's clock (nodecore.Runs.Expire):
// a body still going fails now with ErrTimeout, its slot held until it
// returns, and its return writes nothing (timeout).
func (w *world) expire(n *node, ref spi.ClaimRef) error {
	x := n.execs[ref]
	if x == nil {
		return nil // it returned, or a drain released it
	}
	w.check(invTimeout)
	if !n.runs.Expire(x.snap) {
		w.fail(invTimeout, []*sjob{x.job}, []*node{n}, "the run of %s under claim %d passed its timeout with its body going, but Runs.Expire refused it",
			x.job.label, ref.ClaimSeq)
		return nil
	}
	x.expired = true
	d, final := nodecore.Timeout(x.snap, 0)
	err := fmt.Errorf("%w after %s", ratchet.ErrTimeout, d)
	if final {
		err = ratchet.DoNotRetry(err)
	}
	c := w.complete(n, x, err, spi.AttemptTimedOut)
	w.tracef([]*sjob{x.job}, []*node{n}, "%s run %s/%d timed out after %s -> %s; the body goes on", n.id, x.job.label, ref.ClaimSeq, d, w.describeCompletion(c))
	w.queueFlush(n)
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
	if owed := n.endExec(x); x.expired {
		w.check(invTimeout)
		if owed {
			w.fail(invTimeout, []*sjob{x.job}, []*node{n}, "the body of %s returned after its run timed out (its failure already written), and Runs.End says its return is still owed",
				x.job.label)
			return nil
		}
		w.tracef([]*sjob{x.job}, []*node{n}, "%s body %s/%d returns after its timeout: nothing written, its slot free", n.id, x.job.label, ref.ClaimSeq)
		return w.freed(n)
	}
	if x.job.stepper && !x.cancelled {
		if err := w.recordStep(n, x); err != nil || w.failure != nil {
			return err
		}
	}
	var waitErr error
	var waitEnd spi.AttemptOutcome
	if x.job.waitPlan > 0 && !x.cancelled {
		var err error
		if waitErr, waitEnd, err = w.bodyWaits(n, x); err != nil || w.failure != nil {
			return err
		}
	}
	var err error
	end := spi.AttemptSucceeded
	switch {
	case waitErr != nil:
		err, end = waitErr, waitEnd
	case x.cancelled:
		err, end = context.Canceled, spi.AttemptFailed
	case x.job.snoozes < x.job.snoozePlan:
		// A snoozing body asks to run again later, up to its plan; a
		// plan past the job's bound fails it.
		err, end = ratchet.Snooze(w.randDur(0, 3*time.Second)), spi.AttemptSnoozed
		if x.snap.Snoozes >= cmp.Or(x.job.maxSnoozes, spi.DefaultMaxSnoozes) {
			end = spi.AttemptFailed
		}
	case !x.job.flood && !x.job.probe:
		switch r := w.rng.IntN(100); {
		case r < 70:
		case r < 95:
			err, end = errTransient, spi.AttemptFailed
		default:
			err, end = errPermanent, spi.AttemptFailed
		}
	}
	c := w.complete(n, x, err, end)
	w.tracef([]*sjob{x.job}, []*node{n}, "%s body %s/%d -> %s", n.id, x.job.label, ref.ClaimSeq, w.describeCompletion(c))
	if w.phase == phaseMain && w.chance(w.sc.Faults.CrashAtHook) {
		return w.crash(n, "crash:before-completion")
	}
	w.queueFlush(n)
	return w.freed(n)
}

// recordStep is a durable step at the end of x's body, through the SDK's
// own ratchet.RunStep: the run passes the steps its job's log holds (each
// returns its recorded result without running) and runs and records one
// more, with one write of the log fenced by x's claim, which must apply
// iff the claim is current (step-fence).
func (w *world) recordStep(n *node, x *exec) error {
	ss := spi.CapabilitiesOf(w.store).State
	if ss == nil {
		return nil
	}
	j := x.job
	current := j.status == spi.StatusRunning && j.seq == x.ref.ClaimSeq
	jc := ratchet.NewJobContextWith(x.snap, ratchet.JobContextOptions{State: ss, Logger: slog.New(slog.DiscardHandler)})
	ctx := ratchet.ContextWithJob(w.ctx, jc)
	ran := 0
	var err error
	for k := 1; k <= j.stepsDone+1 && err == nil; k++ {
		_, err = ratchet.RunStep(ctx, fmt.Sprintf("step-%d", k), func(context.Context) (int, error) {
			ran++
			return k, nil
		})
	}
	recorded := err == nil
	if err != nil && !errors.Is(err, ratchet.ErrSuperseded) {
		return w.storeErr("step write", err)
	}
	w.check(invStepFence)
	switch {
	case ran != 1 && recorded:
		w.fail(invStepFence, []*sjob{j}, []*node{n}, "the run of %s under claim %d ran %d step fns for its log of %d steps; expected one, the new step's", j.label, x.ref.ClaimSeq, ran, j.stepsDone)
	case current && !recorded:
		w.fail(invStepFence, []*sjob{j}, []*node{n}, "the run of %s under its current claim %d could not record step %d: %v", j.label, x.ref.ClaimSeq, j.stepsDone+1, err)
	case !current && recorded:
		w.fail(invStepFence, []*sjob{j}, []*node{n}, "a run of %s under claim %d, no longer current (the job is %s under claim %d), recorded step %d",
			j.label, x.ref.ClaimSeq, j.status, j.seq, j.stepsDone+1)
	case recorded:
		j.stepsDone++
		w.tracef([]*sjob{j}, []*node{n}, "%s run %s/%d records step %d", n.id, j.label, x.ref.ClaimSeq, j.stepsDone)
	default:
		w.tracef([]*sjob{j}, []*node{n}, "%s run %s/%d, superseded, records nothing", n.id, j.label, x.ref.ClaimSeq)
	}
	return nil
}

// queueFlush has the completer write what is pending soon.
func (w *world) queueFlush(n *node) {
	if !n.flushQueued {
		n.flushQueued = true
		w.schedule(w.randDur(0, 30*time.Millisecond), w.nodeEvent(n, evFlush))
	}
}

// freed is told that bodies ended: the poller wakes, and a drain that was
// waiting for the last body goes on with the stop.
func (w *world) freed(n *node) error {
	if n.claiming {
		w.queuePoll(n, 0)
	}
	if n.draining && len(n.execs) == 0 {
		n.draining = false
		n.stopAt++
		return w.advanceStop(n)
	}
	return nil
}

// complete queues in the node's completer the owner write that ends x's
// execution with err, which the model says ended the run as end (the
// outcome of its attempt record).
func (w *world) complete(n *node, x *exec, err error, end spi.AttemptOutcome) spi.Completion {
	c := w.completion(x, err)
	w.check(invAttempts)
	if c.Attempt != end || c.Node != n.id || !c.StartedAt.Equal(x.snap.ClaimedAt) {
		w.fail(invAttempts, []*sjob{x.job}, []*node{n}, "the engine's completion of %s's run under claim %d names it %q on %q from %s; expected %q on %q from %s",
			x.job.label, x.ref.ClaimSeq, c.Attempt, c.Node, simtime.Offset(c.StartedAt.Sub(w.start)), end, n.id, simtime.Offset(x.snap.ClaimedAt.Sub(w.start)))
	}
	w.runEnds[x.ref] = end
	n.completer.Add(nodecore.Pending{C: c, Job: x.snap})
	return c
}

// completion builds the owner write that ends an execution with the
// engine's CompletionOf, and checks that it carries the execution's claim
// and, for a failure, the FAQ's retry decision.
func (w *world) completion(x *exec, err error) spi.Completion {
	c := nodecore.CompletionOf(x.snap, err, w.policy, sanitizer, w.now())
	w.check(invFence)
	if c.ClaimRef != x.ref {
		w.fail(invFence, []*sjob{x.job}, nil, "the engine's completion of %s carries claim %d of job %s; the execution holds claim %d",
			x.job.label, c.ClaimSeq, c.JobID, x.ref.ClaimSeq)
	}
	if err == nil {
		c.Result = []byte(fmt.Sprintf(`{"job":%d}`, x.job.idx+1))
		c.ResultType = "simtest.result"
		return c
	}
	var we *ratchet.WaitError
	if errors.As(err, &we) {
		w.checkWait(x.job, x.snap, we, c)
		return c
	}
	if d, ok := ratchet.SnoozeOf(err); ok {
		w.checkSnooze(x.job, x.snap, d, c)
		return c
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
	case spi.OutcomeSnoozed:
		return fmt.Sprintf("snooze %d, due at %s", c.Snoozes, simtime.Offset(c.RetryAt.Sub(w.start)))
	case spi.OutcomeWaiting:
		return fmt.Sprintf("wait %d for %q key %q until %s", c.Snoozes, c.Signal.Name, c.Signal.Key, describeDeadline(w, c.Signal.Deadline))
	default:
		return fmt.Sprintf("error %q, attempt %d, to the DLQ", c.LastError, c.Attempts)
	}
}

// flush writes the completer's batches until its queue is empty or a
// write fails; a write that waits out its backoff goes first (retryWrite).
func (w *world) flush(n *node) error {
	n.flushQueued = false
	if n.retry != nil {
		return nil
	}
	return w.writeQueued(n, false)
}

// writeQueued writes the completer's batches (Take, Attempt) until its
// queue is empty, or a write fails: final, as at the stop's flush, it is
// not tried again and its jobs stay RUNNING, for orphan recovery.
func (w *world) writeQueued(n *node, final bool) error {
	for w.failure == nil {
		batch, logs := n.completer.Take()
		if len(batch) == 0 && len(logs) == 0 {
			return nil
		}
		if !w.attempt(n, batch, logs, final, 0) && !final {
			break
		}
	}
	return w.ioFailure(w.ioErr)
}

// attempt is one write of the completer's (Attempt); a failed one is held
// and tried again after the completer's backoff, unless final.
func (w *world) attempt(n *node, batch []nodecore.Pending, logs []spi.LogAppend, final bool, prev time.Duration) bool {
	n.retry = nil
	logs, done := n.completer.Attempt(w.ctx, batch, logs, final)
	if !done && final {
		for _, p := range batch {
			if j := w.byID[p.Job.ID]; j != nil && j.seq == p.Job.ClaimSeq {
				j.abandoned = true
			}
		}
		js := make([]*sjob, len(batch))
		for i, p := range batch {
			js[i] = w.byID[p.Job.ID]
		}
		w.tracef(js, []*node{n}, "%s stop's flush could not write %d completions: their jobs stay RUNNING, for orphan recovery", n.id, len(batch))
	}
	if done || final || w.ioErr != nil || w.failure != nil {
		return done
	}
	w.report.CompleterRetries++
	n.retry = &heldWrite{batch: batch, logs: logs, backoff: nodecore.Backoff(prev)}
	w.schedule(n.retry.backoff, w.nodeEvent(n, evFlushRetry))
	return false
}

// retryWrite tries the held write again, then what queued meanwhile.
func (w *world) retryWrite(n *node) error {
	h := n.retry
	if h == nil || (n.state != nodeUp && n.state != nodeStopping) {
		return nil
	}
	if !w.attempt(n, h.batch, h.logs, false, h.backoff) {
		return w.ioFailure(w.ioErr)
	}
	return w.writeQueued(n, false)
}

// heartbeat is one tick of the engine's heartbeater: a beat and the claim
// check (which runs even when the beat fails). The bodies it cancels end
// soon with the context's error, holding their slots until then, as the
// engine's do; their completions must be superseded.
func (w *world) heartbeat(n *node) error {
	if !n.beating || (n.state != nodeUp && n.state != nodeStopping) {
		return nil // the stop's StopHeartbeats step ended the loop
	}
	n.stale = n.stale[:0]
	n.hb.Tick(w.ctx)
	if w.ioErr != nil || w.failure != nil {
		return w.ioFailure(w.ioErr)
	}
	w.schedule(w.sc.HeartbeatInterval, w.nodeEvent(n, evHeartbeat))
	w.cancelLost(n)
	return nil
}

// wakeCheck is the claim check alone, which a wakeup saying that claims
// were taken away (a cancel of RUNNING jobs) starts at once on the
// engine's heartbeat loop.
func (w *world) wakeCheck(n *node) error {
	if !n.beating || (n.state != nodeUp && n.state != nodeStopping) {
		return nil
	}
	n.stale = n.stale[:0]
	n.hb.Check(w.ctx)
	if w.ioErr != nil || w.failure != nil {
		return w.ioFailure(w.ioErr)
	}
	w.cancelLost(n)
	return nil
}

// cancelLost checks what the claim check just did (cancel-running), and
// ends soon the bodies it cancelled, with the context's error.
func (w *world) cancelLost(n *node) {
	lost := n.lost
	n.lost = nil
	w.checkCancelled(n, lost)
	if len(lost) == 0 {
		return
	}
	w.tracef(jobsOf(lost), []*node{n}, "%s claim check: %s were taken away; cancelling their bodies", n.id, w.refsOf(lost))
	for _, x := range lost {
		x.cancelled = true
		e := w.nodeEvent(n, evBodyDone)
		e.ref = x.ref
		w.schedule(w.randDur(time.Millisecond, 100*time.Millisecond), e)
	}
}

func (w *world) scan(n *node) error {
	if n.state != nodeUp {
		return nil
	}
	if _, err := n.rescuer.Recover(w.ctx, nil); err != nil {
		return w.ioFailure(err)
	}
	w.schedule(w.sc.OrphanScanInterval, w.nodeEvent(n, evScan))
	return nil
}

// crash kills the node: everything it held in memory is gone, its row
// stays until it goes stale.
func (w *world) crash(n *node, kind string) error {
	w.report.Faults[kind]++
	held := w.beliefs(n)
	w.tracef(jobsOf(held), []*node{n}, "FAULT %s: %s dies holding %s", kind, n.id, w.refsOf(held))
	n.inc++
	n.state = nodeCrashed
	n.stallUntil = time.Time{}
	n.execs = map[spi.ClaimRef]*exec{}
	w.newParts(n) // what it held in memory is gone
	n.flushQueued = false
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

// stop begins a graceful stop: the engine's StopOrder, one step at a time;
// the drain waits for the last body or its timeout.
func (w *world) stop(n *node) error {
	n.state = nodeStopping
	hb, ok := w.nodeRows[n.id]
	n.stopClean = ok && w.now().Sub(hb) <= w.sc.HeartbeatInterval && !w.now().Before(n.beatFailUntil) && !w.now().Before(n.completeFailUntil)
	n.drainTimeout = w.sc.DrainTimeout
	if n.drainTimeout <= 0 {
		n.drainTimeout = w.randDur(500*time.Millisecond, 2*w.sc.OrphanGrace)
	}
	n.stopSteps, n.stopAt, n.stopKind = nodecore.StopOrder(), 0, "stop:drained"
	running := n.runningExecs()
	w.tracef(jobsOf(running), []*node{n}, "FAULT stop: %s stops %v, draining %s (timeout %s)", n.id, n.stopSteps, w.refsOf(running), n.drainTimeout)
	return w.advanceStop(n)
}

// advanceStop runs the stop's steps from n.stopAt until one waits (the
// drain) or the node has stopped.
func (w *world) advanceStop(n *node) error {
	for ; n.stopAt < len(n.stopSteps); n.stopAt++ {
		switch n.stopSteps[n.stopAt] {
		case nodecore.StopClaiming:
			n.claiming = false
		case nodecore.DrainAndRelease:
			if !n.draining {
				// The jobs of the claims whose answer was lost go back.
				if _, err := n.claimer.GiveBackLost(w.ctx, releaseCheck{w: w, n: n}, w.clock.Now()); err != nil {
					return w.ioFailure(err)
				}
			}
			if len(n.execs) > 0 {
				if !n.draining {
					n.draining = true
					w.schedule(n.drainTimeout, w.nodeEvent(n, evDrainLimit))
				}
				return nil // freed or drainLimit goes on
			}
		case nodecore.FlushCompletions:
			if h := n.retry; h != nil {
				w.attempt(n, h.batch, h.logs, true, 0)
			}
			if err := w.writeQueued(n, true); err != nil || w.failure != nil {
				return err
			}
		case nodecore.StopHeartbeats:
			n.beating = false
		case nodecore.Deregister:
			if err := w.store.DeregisterNode(w.ctx, n.id); err != nil {
				return w.storeErr("DeregisterNode", err)
			}
			delete(w.nodeRows, n.id)
		}
	}
	return w.stopped(n)
}

// drainLimit is the executor's release of what a stopping node still runs
// (nodecore.Runs.Release), through a store that checks it; the cancelled
// bodies then end with the context's error, and the ends of those not
// released (their claim already taken) are written, to be superseded.
func (w *world) drainLimit(n *node) error {
	if n.state != nodeStopping || !n.draining {
		return nil
	}
	running := n.runningExecs()
	gave, _, err := n.runs.Release(w.ctx, releaseCheck{w: w, n: n}, w.clock.Now())
	n.lost = nil // the release cancelled them: their bodies end here
	if err != nil || w.failure != nil {
		return w.ioFailure(err)
	}
	w.tracef(jobsOf(running), []*node{n}, "%s drain timed out: releases %s, %d given back", n.id, w.refsOf(running), len(gave))
	for _, x := range running {
		if n.endExec(x) {
			w.complete(n, x, context.Canceled, spi.AttemptFailed)
		}
	}
	n.draining, n.stopKind = false, "stop:drain-timeout"
	n.stopAt++
	return w.advanceStop(n)
}

// stopped ends the process after its stop; it restarts later.
func (w *world) stopped(n *node) error {
	w.report.Faults[n.stopKind]++
	w.tracef(nil, []*node{n}, "%s stopped (%s)", n.id, n.stopKind)
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
			case len(n.unwritten()) > 0:
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
			held := w.beliefs(n)
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
		w.jumps++
		for _, n := range w.nodes {
			n.stopClean = false
		}
		w.tracef(nil, nil, "FAULT clock-jump: the clock jumps %s forward", d)
	}
	if w.chance(f.HeartbeatOutage) {
		if n := pick(func(n *node) bool { return alive(n) && !w.now().Before(n.beatFailUntil) }); n != nil {
			d := w.randDur(w.sc.OrphanGrace/2, 3*w.sc.OrphanGrace)
			w.report.Faults["heartbeat-outage"]++
			n.beatFailUntil = w.now().Add(d)
			n.stopClean = false
			w.tracef(jobsOf(n.runningExecs()), []*node{n}, "FAULT heartbeat-outage: %s's heartbeat writes fail for %s", n.id, d)
		}
	}
	if w.chance(f.ClaimOutage) {
		if n := pick(func(n *node) bool { return alive(n) && !w.now().Before(n.claimFailUntil) }); n != nil {
			d := w.randDur(100*time.Millisecond, 10*time.Second)
			w.report.Faults["claim-outage"]++
			n.claimFailUntil = w.now().Add(d)
			w.tracef(nil, []*node{n}, "FAULT claim-outage: %s's claims fail for %s", n.id, d)
		}
	}
	if w.chance(f.CompletionOutage) {
		if n := pick(func(n *node) bool { return alive(n) && !w.now().Before(n.completeFailUntil) }); n != nil {
			d := w.randDur(100*time.Millisecond, 20*time.Second)
			w.report.Faults["completion-outage"]++
			n.completeFailUntil = w.now().Add(d)
			n.stopClean = false
			w.tracef(nil, []*node{n}, "FAULT completion-outage: %s's completion writes fail for %s", n.id, d)
		}
	}
	return nil
}
