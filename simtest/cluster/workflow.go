package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"
)

// The workflow workload. Unless Scenario.NoWorkflows (or the store keeps no
// workflows), about one arrival in five is a small workflow instead of
// plain jobs: 2 to 6 jobs, each after 0 to 2 earlier ones, its edges
// plain (run after SUCCEEDED), "run anyway" (after any end but SKIPPED) or
// a callback (an OnSuccess or OnFailure step: skipped, not cancelled, when
// its parent ended otherwise). The model keeps every edge and the state its
// parent finished in, recorded by the model itself on every finishing
// write (a completion, a skip or cancel by the engine's gate, an orphan
// recovery that fails the job, a cancel by hand, a workflow cancel), and
// releases a child when its last edge is recorded; a DLQ retry of a parent
// revives the dependents its failure cancelled or skipped, as the
// contract says. The admin workload also cancels BLOCKED jobs and whole
// workflows.
//
// A node dispatches a claimed workflow job as the engine does: it reads the
// job's dependencies and asks spi.Decide (the engine's one rule) whether it
// runs; when not, it writes nodecore.GateCompletion (SKIPPED or CANCELLED)
// instead of running a body. Conditions are not modelled: they are the
// engine's to evaluate after spi.Decide says run, and are tested there.
//
// The invariants, checked after every step:
//
//   - workflow-order: a body starts only when every parent has finished in
//     a state its edge allows, and the engine's decision for a released
//     job is the one its parents' states imply;
//   - workflow-release: a job is BLOCKED exactly while one of its parents
//     has not finished, and the dependencies the store reads back record
//     the states the parents finished in (no early, lost or late release);
//   - callback-once: a callback's decision is skip-not-cancel, it never
//     succeeds twice, and at the end it has succeeded (or failed trying)
//     when its parent ended in the state it waits for, and is SKIPPED
//     without having run otherwise (unless it was cancelled by hand).

const (
	invWorkflowOrder   = "workflow-order"
	invWorkflowRelease = "workflow-release"
	invCallbackOnce    = "callback-once"
)

// sedge is one dependency of a workflow job in the model.
type sedge struct {
	parent *sjob
	allow  spi.Allow
	// recorded is the state the parent finished in, as the store must
	// have recorded it; empty while the parent has not finished.
	recorded spi.Status
}

// sflow is one workflow of the model.
type sflow struct {
	id    uuid.UUID
	label string
	jobs  []*sjob
}

// flowJob is what the workload decides about one job of a workflow: its
// spec and its edges, to jobs earlier in the same workflow.
type flowJob struct {
	spec  jobSpec
	edges []flowEdge
}

type flowEdge struct {
	parent int // index into the workflow's jobs
	allow  spi.Allow
}

// The edge kinds of the workload.
const (
	allowAnyEnd = spi.AllowSucceeded | spi.AllowFailed | spi.AllowCancelled
	onSuccess   = spi.AllowSucceeded | spi.SkipUnlessAllowed
	onFailure   = spi.AllowFailed | spi.SkipUnlessAllowed
)

func edgeName(a spi.Allow) string {
	switch a {
	case 0:
		return ""
	case allowAnyEnd:
		return "~"
	case onSuccess:
		return "+"
	case onFailure:
		return "!"
	}
	return fmt.Sprintf("?%#x", uint8(a))
}

// flowsOn reports whether the run submits workflows.
func (w *world) flowsOn() bool {
	return !w.sc.NoWorkflows && spi.CapabilitiesOf(w.store).Workflows != nil
}

// randomFlow draws a workflow of 2 to 6 jobs.
func (w *world) randomFlow() []flowJob {
	k := 2 + w.rng.IntN(5)
	out := make([]flowJob, k)
	for i := range out {
		s := w.randomSpec()
		s.key = "" // a workflow job carries no idempotency key
		if i > 0 {
			s.delay = 0 // a step is due when released, so that workflows drain as fast as plain jobs
		}
		out[i].spec = s
		if i == 0 {
			continue
		}
		switch r := w.rng.IntN(10); {
		case r < 1: // another root
		case r < 3: // a callback of one earlier job
			allow := onSuccess
			if w.rng.IntN(2) == 0 {
				allow = onFailure
			}
			out[i].edges = []flowEdge{{parent: w.rng.IntN(i), allow: allow}}
		default: // after one or two earlier jobs
			parents := []int{w.rng.IntN(i)}
			if i > 1 && w.rng.IntN(3) == 0 {
				if p := w.rng.IntN(i); p != parents[0] {
					parents = append(parents, p)
				}
			}
			for _, p := range parents {
				var allow spi.Allow
				if w.rng.IntN(6) == 0 {
					allow = allowAnyEnd
				}
				out[i].edges = append(out[i].edges, flowEdge{parent: p, allow: allow})
			}
		}
	}
	return out
}

// submitFlow inserts one workflow in one batch, as Client.SubmitWorkflow
// does, and adds it to the model: the jobs with edges BLOCKED.
func (w *world) submitFlow(fjs []flowJob) error {
	now := w.now()
	f := &sflow{id: w.newID(), label: fmt.Sprintf("w%d", len(w.flows)+1)}
	jobs := make([]*spi.Job, len(fjs))
	for i, fj := range fjs {
		s := fj.spec
		jobs[i] = &spi.Job{
			ID: w.newID(), TaskName: s.task, Payload: []byte(fmt.Sprintf(`{"n":%d}`, len(w.jobs)+i+1)),
			Status: spi.StatusPending, Priority: s.prio, ScheduledAt: now.Add(s.delay), CreatedAt: now,
			MaxRetries: s.maxRetries, Backoff: s.backoff, BackoffParam: s.param,
			Tags: slices.Clone(s.tags), Resource: s.resource, ResourceLimit: s.limit, WorkflowID: f.id,
		}
		for _, e := range fj.edges {
			jobs[i].Dependencies = append(jobs[i].Dependencies, spi.Dependency{ParentID: jobs[e.parent].ID, Allow: e.allow})
			jobs[e.parent].Dependents++
		}
	}
	res, err := w.store.InsertJobs(w.ctx, jobs, spi.InsertOptions{})
	if err != nil {
		return w.storeErr("InsertJobs", err)
	}
	if len(res) != len(jobs) {
		w.fail(invIdempotency, nil, nil, "InsertJobs returned %d results for a workflow of %d jobs", len(res), len(jobs))
		return nil
	}
	w.flows = append(w.flows, f)
	parts := make([]string, len(fjs))
	for i, fj := range fjs {
		w.check(invIdempotency)
		if res[i].Duplicate || res[i].ID != jobs[i].ID {
			w.fail(invIdempotency, nil, nil, "workflow job %s was reported duplicate=%v id %s", jobs[i].ID, res[i].Duplicate, res[i].ID)
			return nil
		}
		s := fj.spec
		j := &sjob{
			idx: len(w.jobs), id: jobs[i].ID, task: s.task, poison: s.poison, prio: s.prio, due: jobs[i].ScheduledAt,
			maxRetries: s.maxRetries, backoff: s.backoff, param: s.param, tags: s.tags, resource: s.resource, limit: s.limit,
			pendPos: -1, runPos: -1, flow: f,
		}
		j.label = fmt.Sprintf("j%d", j.idx+1)
		var after []string
		for _, e := range fj.edges {
			p := f.jobs[e.parent]
			j.deps = append(j.deps, &sedge{parent: p, allow: e.allow})
			p.kids = append(p.kids, j)
			after = append(after, edgeName(e.allow)+p.label)
		}
		j.callback = len(j.deps) == 1 && j.deps[0].allow&spi.SkipUnlessAllowed != 0
		f.jobs = append(f.jobs, j)
		w.jobs = append(w.jobs, j)
		w.byID[j.id] = j
		w.nonTerminal++
		if len(j.deps) > 0 {
			w.setStatus(j, spi.StatusBlocked)
		} else {
			w.setStatus(j, spi.StatusPending)
		}
		w.touch(j)
		desc := fmt.Sprintf("%s(%s %s", j.label, s.task, s.prio)
		if s.delay > 0 {
			desc += " due " + simtime.Offset(j.due.Sub(w.start))
		}
		if len(after) > 0 {
			desc += " after " + strings.Join(after, ",")
		}
		parts[i] = desc + ")"
	}
	w.tracef(f.jobs, nil, "client submit workflow %s [%s] (~ any end, + on success, ! on failure)", f.label, strings.Join(parts, " "))
	return nil
}

// flowFinished applies, to the model, what the write that finished j
// must have done: record j's state on each dependent's edge and release
// the dependents whose last edge that was (BLOCKED → PENDING, due at the
// later of their due time and now). Every dependent is checked after the
// step, released or not.
func (w *world) flowFinished(j *sjob, now time.Time) { w.resolveEdges(j, j.status, now) }

// resolveEdges records st on the unrecorded edges from j that st resolves
// (a terminal state: those it does not hold; spi.TurnPassed: the fairness
// keys' links) and releases the dependents whose last edge that was.
func (w *world) resolveEdges(j *sjob, st spi.Status, now time.Time) {
	for _, k := range j.kids {
		for _, e := range k.deps {
			if e.parent != j || e.recorded != "" || (st == spi.TurnPassed && e.allow != spi.TurnAllow) || e.allow.Holds(st) {
				continue
			}
			e.recorded = st
		}
		w.touch(k)
		if k.status == spi.StatusBlocked && k.waiting() == 0 {
			w.setStatus(k, spi.StatusPending)
			if k.due.Before(now) {
				k.due = now
			}
		}
	}
}

// waiting is the number of j's parents that have not finished.
func (j *sjob) waiting() int {
	n := 0
	for _, e := range j.deps {
		if e.recorded == "" {
			n++
		}
	}
	return n
}

// reviveFlow applies a DLQ retry of parent to its dependents: each that
// has not run yet (BLOCKED or PENDING), or that its dependencies
// cancelled or skipped, waits BLOCKED for parent again, and so on down the
// workflow.
func (w *world) reviveFlow(parent *sjob) {
	frontier := []*sjob{parent}
	for len(frontier) > 0 {
		p := frontier[0]
		frontier = frontier[1:]
		for _, k := range p.kids {
			again := k.status == spi.StatusBlocked || k.status == spi.StatusPending ||
				((k.status == spi.StatusCancelled || k.status == spi.StatusSkipped) && spi.CancelledByDependency(k.lastErr))
			if !again {
				continue
			}
			for _, e := range k.deps {
				if e.parent == p {
					e.recorded = ""
				}
			}
			if k.status == spi.StatusCancelled || k.status == spi.StatusSkipped {
				frontier = append(frontier, k)
			}
			w.setStatus(k, spi.StatusBlocked)
			k.finishedAt, k.lastErr = time.Time{}, ""
			k.bodies, k.handCancelled = 0, false
			w.touch(k)
		}
	}
}

// modelDecision is what a released job must do, from the states its
// parents finished in, written out independently of spi.Decide: a parent
// in a state its edge does not allow cancels the job when that state is
// FAILED or CANCELLED and the edge is not a callback's, and skips it
// otherwise; a cancel wins over a skip.
func modelDecision(j *sjob) spi.Decision {
	d := spi.DecideRun
	for _, e := range j.deps {
		allowed := false
		switch e.recorded {
		case spi.StatusSucceeded:
			allowed = e.allow&spi.AllowSucceeded != 0 || e.allow&(spi.AllowSucceeded|spi.AllowFailed|spi.AllowCancelled|spi.AllowSkipped) == 0
		case spi.StatusFailed:
			allowed = e.allow&spi.AllowFailed != 0
		case spi.StatusCancelled:
			allowed = e.allow&spi.AllowCancelled != 0
		case spi.StatusSkipped:
			allowed = e.allow&spi.AllowSkipped != 0
		case spi.TurnPassed: // a fairness key's link, passed by its parent's claim
			if e.allow != spi.TurnAllow {
				return spi.DecideCancel
			}
			allowed = true
		default:
			return spi.DecideCancel // not finished: never released
		}
		switch {
		case allowed:
		case e.allow&spi.SkipUnlessAllowed == 0 && (e.recorded == spi.StatusFailed || e.recorded == spi.StatusCancelled):
			return spi.DecideCancel
		default:
			d = spi.DecideSkip
		}
	}
	return d
}

func decisionName(d spi.Decision) string {
	switch d {
	case spi.DecideRun:
		return "run"
	case spi.DecideSkip:
		return "skip"
	case spi.DecideCancel:
		return "cancel"
	}
	return fmt.Sprintf("decision(%d)", d)
}

func (j *sjob) edgeList() string {
	parts := make([]string, len(j.deps))
	for i, e := range j.deps {
		st := string(e.recorded)
		if st == "" {
			st = "unfinished"
		}
		parts[i] = fmt.Sprintf("%s%s=%s", edgeName(e.allow), e.parent.label, st)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func parentsOf(j *sjob) []*sjob {
	out := []*sjob{j}
	for _, e := range j.deps {
		out = append(out, e.parent)
	}
	return out
}

// dispatch is the engine's gate for a claimed workflow job: it reads the
// job's dependencies, checks them against the model, and decides with the
// engine's code whether the job runs. When it does not, the gate's owner
// write is queued and dispatch returns false.
func (w *world) dispatch(n *node, x *exec) (run bool, err error) {
	j := x.job
	if x.snap.DependencyCount == 0 && len(j.deps) == 0 {
		return w.checkSequenceStart(n, j), nil
	}
	ws := spi.CapabilitiesOf(w.store).Workflows
	deps, err := ws.Dependencies(w.ctx, j.id)
	if err != nil {
		return false, w.storeErr("Dependencies", err)
	}
	w.check(invWorkflowRelease)
	if d := w.compareDeps(j, x.snap, deps); d != "" {
		w.fail(invWorkflowRelease, parentsOf(j), []*node{n}, "%s was released and claimed by %s, but %s", j.label, n.id, d)
		return false, nil
	}
	decision, reason := nodecore.Decide(deps)
	want := modelDecision(j)
	inv := invWorkflowOrder
	if j.callback {
		inv = invCallbackOnce
	}
	w.check(inv)
	if decision != want {
		w.fail(inv, parentsOf(j), []*node{n}, "the engine decided %s for %s with parents %s; their states demand %s",
			decisionName(decision), j.label, j.edgeList(), decisionName(want))
		return false, nil
	}
	if decision == spi.DecideRun {
		if !w.checkSequenceStart(n, j) {
			return false, nil
		}
		w.check(invWorkflowOrder)
		for _, e := range j.deps {
			if e.recorded == spi.TurnPassed && e.allow == spi.TurnAllow {
				continue // a fair turn: its parent was claimed
			}
			if !e.recorded.Terminal() || !allowsModel(e.allow, e.recorded) {
				w.fail(invWorkflowOrder, parentsOf(j), []*node{n}, "%s starts on %s while its parent %s is %s, which its edge does not allow",
					j.label, n.id, e.parent.label, e.parent.status)
				return false, nil
			}
		}
		j.bodies++
		return true, nil
	}
	c := nodecore.GateCompletion(x.snap, decision, reason, w.now())
	w.check(invFence)
	if c.ClaimRef != x.ref {
		w.fail(invFence, []*sjob{j}, []*node{n}, "the engine's gate write for %s carries claim %d; the claim is %d", j.label, c.ClaimSeq, x.ref.ClaimSeq)
		return false, nil
	}
	n.endExec(x)
	n.completer.Add(nodecore.Pending{C: c, Job: x.snap})
	w.tracef([]*sjob{j}, []*node{n}, "%s gate %s/%d: parents %s -> %s (%s)", n.id, j.label, x.ref.ClaimSeq, j.edgeList(), c.Outcome.Status(), reason)
	w.queueFlush(n)
	return false, nil
}

// allowsModel is Allow.Allows, written out for the order check.
func allowsModel(a spi.Allow, st spi.Status) bool {
	j := &sjob{deps: []*sedge{{allow: a &^ spi.SkipUnlessAllowed, recorded: st}}}
	return modelDecision(j) == spi.DecideRun
}

// compareDeps reports how the dependencies the store returned for j
// differ from the model's edges, or "".
func (w *world) compareDeps(j *sjob, snap *spi.Job, deps []spi.Dependency) string {
	if snap.DependencyCount != len(j.deps) || len(deps) != len(j.deps) {
		return fmt.Sprintf("the store holds %d dependencies (DependencyCount %d); the workflow gave it %d %s",
			len(deps), snap.DependencyCount, len(j.deps), j.edgeList())
	}
	for i, d := range deps {
		e := j.deps[i]
		switch {
		case d.ParentID != e.parent.id || d.Allow != e.allow:
			return fmt.Sprintf("its dependency %d is on %s (allow %#x); the workflow gave it %s", i+1, d.ParentID, uint8(d.Allow), j.edgeList())
		case d.ParentStatus != e.recorded:
			return fmt.Sprintf("its dependency on %s records %q; the parent finished %s (model %s)", e.parent.label, d.ParentStatus, e.recorded, j.edgeList())
		}
	}
	return ""
}

// releaseInvariant names the invariant that a stored status different
// from the model's breaks: workflow-release when one side is BLOCKED.
func releaseInvariant(j *sjob, g *spi.Job) string {
	switch {
	case (j.status == spi.StatusBlocked) != (g.Status == spi.StatusBlocked):
		return invWorkflowRelease
	case j.sig != nil:
		return invSignalOnce // a wait resolved twice, early or lost shows in its state and outcome
	}
	return invStoreModel
}

func (w *world) releaseDetail(j *sjob, g *spi.Job, d string) string {
	if releaseInvariant(j, g) != invWorkflowRelease {
		return fmt.Sprintf("%s in the store differs from the contract's result: %s", j.label, d)
	}
	if j.status == spi.StatusBlocked {
		return fmt.Sprintf("%s was released (%s) while its parents %s have not all finished", j.label, g.Status, j.edgeList())
	}
	return fmt.Sprintf("%s is still BLOCKED in the store, but its parents %s have all finished: it should be %s", j.label, j.edgeList(), j.status)
}

// adminCancelFlow cancels a random workflow that has unfinished jobs and
// checks it against the model.
func (w *world) adminCancelFlow(now time.Time) {
	var open []*sflow
	for _, f := range w.flows {
		if slices.ContainsFunc(f.jobs, func(j *sjob) bool { return !j.status.Terminal() }) {
			open = append(open, f)
		}
	}
	if len(open) == 0 {
		return
	}
	f := open[w.rng.IntN(len(open))]
	got, err := spi.CapabilitiesOf(w.store).Workflows.CancelWorkflow(w.ctx, f.id, now)
	var want []*sjob
	for _, j := range f.jobs {
		if !j.status.Terminal() {
			want = append(want, j)
		}
	}
	w.tracef(f.jobs, nil, "client cancel workflow %s (unfinished %s) -> %d, %v", f.label, labels(want), got, err)
	w.check(invAdminOps)
	if err != nil || got != len(want) {
		w.fail(invAdminOps, want, nil, "CancelWorkflow of %s cancelled %d jobs (err %v); %d had not finished", f.label, got, err, len(want))
		return
	}
	w.cancelledByHand(want, now)
	for _, j := range f.jobs {
		w.flowFinished(j, now)
	}
}

// cancelledByHand applies to the model the cancel of the unfinished jobs
// of a workflow or batch: CANCELLED at now, a RUNNING one fenced out.
func (w *world) cancelledByHand(jobs []*sjob, now time.Time) {
	for _, j := range jobs {
		if j.status == spi.StatusRunning {
			w.recordRun(j, j.seq, spi.AttemptCancelled)
			j.seq++
			j.owner = ""
		}
		w.setStatus(j, spi.StatusCancelled)
		j.finishedAt, j.handCancelled = now, true
		w.touch(j)
	}
}

// wakeChecks delivers the wakeup of a cancel of RUNNING jobs: most nodes
// run their claim check within 200 ms; the others lost the wakeup and
// find out at their next heartbeat.
func (w *world) wakeChecks() {
	for _, n := range w.nodes {
		if w.chance(0.8) {
			w.schedule(w.randDur(time.Millisecond, 200*time.Millisecond), w.nodeEvent(n, evClaimCheck))
		}
	}
}

// checkCancelled is the check of cancel-running after a claim check of n
// that found the claims n.stale no longer current and cancelled the
// bodies lost: the body of a job cancelled by hand while RUNNING under
// its claim is among them.
func (w *world) checkCancelled(n *node, lost []*exec) {
	for _, r := range n.stale {
		j := w.byID[r.JobID]
		if j == nil || j.abortedSeq != r.ClaimSeq {
			continue
		}
		w.check(invCancelRunning)
		if !slices.ContainsFunc(lost, func(x *exec) bool { return x.ref == r }) {
			w.fail(invCancelRunning, []*sjob{j}, []*node{n}, "%s's claim check found claim %d of %s cancelled, but left its body running",
				n.id, r.ClaimSeq, j.label)
			return
		}
	}
}

// checkCallbacks is the final check of callback-once.
func (w *world) checkCallbacks() {
	for _, j := range w.jobs {
		if !j.callback {
			continue
		}
		w.check(invCallbackOnce)
		want := modelDecision(j)
		switch {
		case j.successes > 1:
			w.fail(invCallbackOnce, parentsOf(j), nil, "callback %s succeeded %d times", j.label, j.successes)
		case j.status == spi.StatusCancelled:
			if !j.handCancelled {
				w.fail(invCallbackOnce, parentsOf(j), nil, "callback %s ended CANCELLED (%q) without a cancel by hand; a callback is skipped, never cancelled by its parent", j.label, j.lastErr)
			}
		case want == spi.DecideRun && j.status != spi.StatusSucceeded && j.status != spi.StatusFailed:
			w.fail(invCallbackOnce, parentsOf(j), nil, "callback %s ended %s, but its parent's end %s fires it", j.label, j.status, j.edgeList())
		case want == spi.DecideRun && j.status == spi.StatusSucceeded && j.successes != 1:
			w.fail(invCallbackOnce, parentsOf(j), nil, "callback %s is SUCCEEDED after %d successful runs", j.label, j.successes)
		case want != spi.DecideRun && j.bodies > 0:
			w.fail(invCallbackOnce, parentsOf(j), nil, "callback %s ran %d times, but its parent's end %s skips it", j.label, j.bodies, j.edgeList())
		case want != spi.DecideRun && j.status != spi.StatusSkipped && (j.status != spi.StatusFailed || j.lastErr != recoveryMessage):
			// (a node that died between the claim and the gate's write
			// can leave it FAILED by the crash budget, never run)
			w.fail(invCallbackOnce, parentsOf(j), nil, "callback %s ended %s (%q), but its parent's end %s skips it", j.label, j.status, j.lastErr, j.edgeList())
		}
		if w.failure != nil {
			return
		}
	}
}
