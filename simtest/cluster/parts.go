package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The engine's parts a node runs, built for each incarnation on the
// simulator's store and fake clock: nodecore's heartbeater, rescuer and
// completer, the engine's own code. Each reaches the store through a
// decorator that checks every call against the model and applies it, and
// injects the outages of the fault schedule.

// errOutage is the error of a store call that an injected outage fails.
var errOutage = errors.New("injected outage: the database does not answer")

// newParts builds the node's parts for a new incarnation.
func (w *world) newParts(n *node) {
	quiet := slog.New(slog.DiscardHandler)
	d := nodecore.HeartbeaterDeps{Clock: w.clock, Log: quiet,
		Write:      func(_ context.Context, now time.Time) error { return w.writeBeat(n, now) },
		Running:    func() []*nodecore.Run { return n.runs.Running() },
		Superseded: func(context.Context, *spi.Job) {}}
	if cc := spi.CapabilitiesOf(w.store).Claims; cc != nil {
		d.Claims = claimCheck{ClaimChecker: cc, w: w, n: n}
	}
	n.hb = nodecore.NewHeartbeater(d)
	n.rescuer = nodecore.Rescuer{Store: recoverCheck{w: w, n: n}, Clock: w.clock, Log: quiet,
		Grace: w.sc.OrphanGrace, MaxCrash: w.maxCrash}
	cd := nodecore.ClaimerDeps{Store: claimsCheck{w: w, n: n}, Clock: w.clock, Log: quiet,
		Params:   spi.ClaimParams{NodeID: n.id, BoostInterval: w.sc.BoostInterval, Tags: n.tags, Tasks: simTasks},
		Dispatch: func(j *spi.Job) { w.startJob(n, j) }, ProbeEvery: w.sc.PollInterval,
		Fresh: func() bool { return n.policy.Fresh(w.now(), n.hb.LastBeat()) }}
	// The engine's poller breaker with its default configuration.
	cd.Breaker, _ = breaker.New(spi.CircuitBreakerConfig{}, nil)
	if a := spi.CapabilitiesOf(w.store).Adopter; a != nil {
		cd.Adopter = adoptCheck{ClaimAdopter: a, w: w, n: n}
	}
	var tasks *nodecore.TaskSlots
	if n.limits != nil {
		tasks = nodecore.NewTaskSlots(simTasks, n.slots, func(task string, def int) int {
			if l, ok := n.limits[task]; ok {
				return l
			}
			return def
		})
	}
	n.runs = nodecore.NewRuns(n.slots, tasks)
	if n.runs.Limited() {
		cd.Limited, cd.Admit = n.runs.Claimable, n.runs.Admit
		cd.GiveBack = func(ctx context.Context, over []*spi.Job) { w.giveBack(ctx, n, over) }
	}
	n.claimer = nodecore.NewClaimer(cd)
	n.completer = nodecore.NewCompleter(nodecore.CompleterDeps{Store: completeCheck{w: w, n: n}, Clock: w.clock, Log: quiet,
		Batch: n.batch, Written: func(context.Context, nodecore.Pending, bool) {}, Released: n.runs.WasReleased})
	n.retry, n.lost = nil, nil
}

// ioFailure ends the simulation with err, a store call that failed of
// itself; nil for none.
func (w *world) ioFailure(err error) error {
	if err == nil || errors.Is(err, errOutage) || errors.Is(err, errCaught) {
		err = w.ioErr
	}
	w.ioErr = nil
	return err
}

// writeBeat is the heartbeater's write: the node's row at now, unless an
// injected outage fails it.
func (w *world) writeBeat(n *node, now time.Time) error {
	if now.Before(n.beatFailUntil) {
		w.tracef(nil, []*node{n}, "%s heartbeat fails (outage)", n.id)
		return errOutage
	}
	if err := w.store.Heartbeat(w.ctx, n.id, now); err != nil {
		w.ioErr = w.storeErr("Heartbeat", err)
		return err
	}
	w.nodeRows[n.id] = now
	w.tracef(nil, []*node{n}, "%s heartbeat", n.id)
	return nil
}

// claimCheck is the claim checker as a node's heartbeater sees it: each
// answer is checked against the model.
type claimCheck struct {
	spi.ClaimChecker
	w *world
	n *node
}

func (c claimCheck) CheckClaims(ctx context.Context, refs []spi.ClaimRef) ([]bool, error) {
	w, n := c.w, c.n
	current, err := c.ClaimChecker.CheckClaims(ctx, slices.Clone(refs))
	if err != nil {
		w.ioErr = w.storeErr("CheckClaims", err)
		return nil, err
	}
	if len(current) != len(refs) {
		w.fail(invClaimCheck, nil, []*node{n}, "CheckClaims returned %d results for %d refs", len(current), len(refs))
		return nil, errCaught
	}
	n.stale = n.stale[:0]
	for i, r := range refs {
		j := w.byID[r.JobID]
		if !current[i] {
			n.stale = append(n.stale, r)
		}
		w.check(invClaimCheck)
		if want := j != nil && j.status == spi.StatusRunning && j.seq == r.ClaimSeq; current[i] != want {
			w.fail(invClaimCheck, []*sjob{j}, []*node{n}, "CheckClaims says claim %d of %s is current=%v, but the job is %s with claim %d",
				r.ClaimSeq, j.label, current[i], j.status, j.seq)
			return nil, errCaught
		}
	}
	return current, nil
}

// recoverCheck is the store as a node's rescuer sees it: what each scan
// recovers is checked against the model, and applied to it.
type recoverCheck struct {
	w *world
	n *node
}

func (c recoverCheck) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	w, n := c.w, c.n
	got, err := w.store.RecoverOrphans(ctx, p)
	if err != nil {
		w.ioErr = w.storeErr("RecoverOrphans", err)
		return nil, err
	}
	what := "orphan scan"
	if len(p.Nodes) > 0 {
		what = "recovers its own jobs"
	}
	w.tracef(w.recoveredJobs(got), []*node{n}, "%s %s -> %s", n.id, what, describeRecovered(w, got))
	w.checkRecover(n, p, got)
	if w.failure != nil {
		return nil, errCaught
	}
	return got, nil
}

// completeCheck is the store as a node's completer sees it: each write is
// checked against the model and applied to it, unless an injected outage
// fails it.
type completeCheck struct {
	w *world
	n *node
}

func (c completeCheck) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	w, n := c.w, c.n
	js := make([]*sjob, len(cs))
	labels := make([]string, len(cs))
	for i, x := range cs {
		js[i] = w.byID[x.JobID]
		labels[i] = fmt.Sprintf("%s/%d", js[i].label, x.ClaimSeq)
	}
	if w.now().Before(n.completeFailUntil) {
		w.tracef(js, []*node{n}, "%s complete [%s] fails (outage)", n.id, strings.Join(labels, ", "))
		for _, j := range js {
			w.touch(j) // the step's checks see that the node still holds them
		}
		return nil, errOutage
	}
	applied, err := w.store.CompleteJobs(ctx, slices.Clone(cs))
	if err != nil {
		w.ioErr = w.storeErr("CompleteJobs", err)
		return nil, err
	}
	w.report.Completions += len(cs)
	parts := make([]string, len(cs))
	for i, x := range cs {
		res := "applied"
		if i < len(applied) && !applied[i] {
			res = "superseded"
		}
		parts[i] = fmt.Sprintf("%s/%d %s", js[i].label, x.ClaimSeq, res)
	}
	w.tracef(js, []*node{n}, "%s complete [%s]", n.id, strings.Join(parts, ", "))
	w.checkComplete(n, cs, applied)
	if w.failure != nil {
		return nil, errCaught
	}
	return applied, nil
}

// claimsCheck is the store as a node's claim step sees it: what each claim
// returns is checked against the model (order, aging, tags, permits) and
// applied to it; the aging probe's flood is topped up before.
type claimsCheck struct {
	w *world
	n *node
}

func (c claimsCheck) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	w, n := c.w, c.n
	outage := w.now().Before(n.claimFailUntil)
	// Half the failing claims apply and lose their answer, on a store
	// that lets the node adopt their jobs: on another (a wrapper that
	// hides the capability) nothing would ever end them.
	if outage && (w.rng.IntN(2) == 0 || spi.CapabilitiesOf(w.store).Adopter == nil) {
		w.report.ClaimFailures++
		w.tracef(nil, []*node{n}, "%s claim limit=%d fails (outage)", n.id, p.Limit)
		return nil, errOutage
	}
	if w.probe != nil && w.probe.active && n.tags.Match(nil) {
		// only nodes that may run the probe (untagged) count for its bound
		if err := w.floodTopUp(p.Limit); err != nil {
			w.ioErr = err
			return nil, err
		}
		w.probe.claimCall(p.Now)
	}
	got, err := w.store.ClaimJobs(ctx, p)
	if err != nil {
		w.ioErr = w.storeErr("ClaimJobs", err)
		return nil, err
	}
	w.report.Claims++
	w.report.Claimed += len(got)
	claimed := w.checkClaim(n, p.Limit, p.Now, got)
	if w.failure != nil {
		w.tracef(claimed, []*node{n}, "%s claim limit=%d -> %d jobs", n.id, p.Limit, len(got))
		return nil, errCaught
	}
	refs := make([]string, len(got))
	for i, g := range got {
		refs[i] = fmt.Sprintf("%s/%d", claimed[i].label, g.ClaimSeq)
		if w.probe != nil && w.probe.active && claimed[i] == w.probe.job {
			w.probeClaimed(p.Now)
		}
	}
	if outage { // applied, but its answer is lost: the node adopts its jobs later
		w.report.ClaimFailures++
		w.report.LostAnswers++
		for _, j := range claimed {
			j.adopting = true
		}
		w.tracef(claimed, []*node{n}, "%s claim limit=%d -> [%s], its answer lost (outage)", n.id, p.Limit, strings.Join(refs, " "))
		return nil, errOutage
	}
	if len(got) > 0 {
		w.tracef(claimed, []*node{n}, "%s claim limit=%d -> [%s]", n.id, p.Limit, strings.Join(refs, " "))
	} else {
		w.tracef(nil, []*node{n}, "%s claim limit=%d -> nothing", n.id, p.Limit)
	}
	return got, nil
}

// adoptCheck is the claim adopter as a node's claim step sees it: the jobs
// it adopts must be exactly those of the node's claims whose answer was
// lost and that are still RUNNING under it.
type adoptCheck struct {
	spi.ClaimAdopter
	w *world
	n *node
}

func (c adoptCheck) AdoptClaims(ctx context.Context, nodeID string, claimedAt []time.Time) ([]*spi.Job, error) {
	w, n := c.w, c.n
	got, err := c.ClaimAdopter.AdoptClaims(ctx, nodeID, claimedAt)
	if err != nil {
		w.ioErr = w.storeErr("AdoptClaims", err)
		return nil, err
	}
	var want []*sjob
	for _, j := range w.running {
		if j.adopting && j.owner == n.id && slices.ContainsFunc(claimedAt, j.claimedAt.Equal) {
			want = append(want, j)
		}
	}
	w.check(invNothingLost)
	gotJobs := make([]*sjob, len(got))
	for i, g := range got {
		gotJobs[i] = w.byID[g.ID]
	}
	if len(got) != len(want) || slices.ContainsFunc(gotJobs, func(j *sjob) bool { return j == nil || !slices.Contains(want, j) }) {
		w.fail(invNothingLost, append(want, gotJobs...), []*node{n}, "%s adopted %s after its lost claims; they took %s", n.id, labels(gotJobs), labels(want))
		return nil, errCaught
	}
	for _, j := range want {
		j.adopting = false
		w.touch(j)
	}
	w.report.Adopted += len(got)
	if len(got) > 0 {
		w.tracef(gotJobs, []*node{n}, "%s adopts %s, claimed by its claims whose answer was lost", n.id, labels(gotJobs))
	}
	return got, nil
}

// giveBack is the executor's give-back of claimed jobs over a task's limit
// (nodecore.GiveBack), through a store that checks each release; a job it
// could not give back runs past the limit, as the engine's does.
func (w *world) giveBack(ctx context.Context, n *node, over []*spi.Job) {
	js := make([]*sjob, len(over))
	for i, j := range over {
		js[i] = w.byID[j.ID]
	}
	w.tracef(js, []*node{n}, "%s gives back %d jobs over their task's limit", n.id, len(over))
	kept, err := nodecore.GiveBack(ctx, releaseCheck{w: w, n: n}, w.clock.Now(), over)
	if err != nil {
		return // the check failed, or the store did: ioErr says
	}
	w.report.GiveBacks += len(over) - len(kept)
	for _, j := range kept {
		n.runs.Force(j.TaskName)
		n.forced = true
		w.startJob(n, j)
		n.forced = false
	}
}

// releaseCheck is the store as a node's give-back sees it: each release is
// checked against the model and applied to it.
type releaseCheck struct {
	w *world
	n *node
}

func (c releaseCheck) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	w := c.w
	applied, err := w.store.ReleaseJobs(ctx, slices.Clone(refs), now)
	if err != nil {
		w.ioErr = w.storeErr("ReleaseJobs", err)
		return nil, err
	}
	w.checkRelease(c.n, refs, applied, now)
	if w.failure != nil {
		return nil, errCaught
	}
	return applied, nil
}
