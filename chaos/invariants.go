package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The invariants of the probe schedules and workflows.
const (
	// InvRecurringSlots: each slot of a probe schedule, from its first
	// after the registration to the end of the fault phase, fired exactly
	// one job (the job's idempotency key names its slot), and no job
	// names a slot outside them. Every misfire policy skips only the slots
	// that fire later than the misfire threshold (1 min); with one node
	// always up running the scheduler every second, none is that late, so
	// a slot without a job is a violation whatever the policy.
	InvRecurringSlots = "recurring-slots"
	// InvWorkflowOrder: in the probe workflows and the application's, no
	// execution of a child started (by the database's clock, in the
	// ledger) before the finalizing execution of each of its parents
	// ended; a child ran only when every parent ended in a state its
	// dependency allows (SUCCEEDED for the probes), and did run when
	// they all did (unless a condition said no, or, in the application's
	// workflows, it was cancelled otherwise than by a dependency). The
	// probe workflows' edges are the ones submitted; the application's
	// are read from the store.
	InvWorkflowOrder = "workflow-order"
)

// checkSlots checks the jobs of one probe schedule against its slots; it
// returns the violations and the number of slots that had to fire. fires
// are the workers' schedule-fired lines of the schedule: a missing slot's
// violation says which fires the nodes reported from the slot to the next
// one, and whether their jobs are in the store.
func checkSlots(sr *scheduleRun, jobs map[uuid.UUID]*ratchet.Job, fires []Line) ([]Violation, int) {
	sched, err := cronexpr.Parse(sr.Expr, "")
	if err != nil {
		return []Violation{{Invariant: InvRecurringSlots, Detail: fmt.Sprintf("schedule %s: expression %q: %v", sr.ID, sr.Expr, err)}}, 0
	}
	bySlot := map[int64][]uuid.UUID{}
	for id, j := range jobs {
		if t, ok := keySlot(sr.ID, j.IdempotencyKey); ok {
			bySlot[t.Unix()] = append(bySlot[t.Unix()], id)
		}
	}
	expected := map[int64]bool{}
	var missing []time.Time
	for t := sched.Next(sr.Registered); !t.IsZero() && t.Before(sr.Next); t = sched.Next(t) {
		expected[t.Unix()] = true
		if len(bySlot[t.Unix()]) == 0 {
			missing = append(missing, t.UTC())
		}
	}
	var out []Violation
	var dupIDs, strayIDs []uuid.UUID
	var dupSlots, straySlots []time.Time
	for _, s := range slices.Sorted(maps.Keys(bySlot)) {
		ids := bySlot[s]
		if len(ids) > 1 {
			dupIDs = append(dupIDs, ids...)
			dupSlots = append(dupSlots, time.Unix(s, 0).UTC())
		}
		if !expected[s] {
			strayIDs = append(strayIDs, ids...)
			straySlots = append(straySlots, time.Unix(s, 0).UTC())
		}
	}
	if len(dupSlots) > 0 {
		out = append(out, Violation{Invariant: InvRecurringSlots, Jobs: sortIDs(dupIDs), Slots: dupSlots,
			Detail: fmt.Sprintf("schedule %s fired %d slots more than once (%d jobs): %s", sr.ID, len(dupSlots), len(dupIDs), slotList(dupSlots))})
	}
	if len(missing) > 0 {
		out = append(out, Violation{Invariant: InvRecurringSlots, Slots: missing,
			Detail: fmt.Sprintf("schedule %s (misfire %s) fired no job for %d of its %d slots in the fault phase, though a node was always up (%d slots counted as skipped): %s; %s",
				sr.ID, sr.Misfire, len(missing), len(expected), sr.Skipped, slotList(missing), firesNear(sched, missing, fires, jobs))})
	}
	if len(straySlots) > 0 {
		out = append(out, Violation{Invariant: InvRecurringSlots, Jobs: sortIDs(strayIDs), Slots: straySlots,
			Detail: fmt.Sprintf("schedule %s fired %d jobs for slots outside its slots from %s to %s: %s", sr.ID, len(strayIDs),
				sr.Registered.UTC().Format(time.RFC3339), sr.Next.UTC().Format(time.RFC3339), slotList(straySlots))})
	}
	return out, len(expected)
}

// firesNear describes, for each missing slot, the fires the nodes reported
// from it to the next slot: each one's node, time and job, and whether the
// job is in the store (a fire whose job is absent is a write the store
// lost; no fire at all, a slot the scheduler passed over).
func firesNear(sched *cronexpr.Schedule, missing []time.Time, fires []Line, jobs map[uuid.UUID]*ratchet.Job) string {
	var parts []string
	for _, s := range missing {
		next := sched.Next(s)
		var seen []string
		for _, f := range fires {
			if f.At.Before(s) || !f.At.Before(next) {
				continue
			}
			where := "in the store"
			if jobs[f.Job] == nil {
				where = "NOT in the store"
			}
			seen = append(seen, fmt.Sprintf("%s fired job %s at %s (%s)", f.Node, f.Job, f.At.UTC().Format("15:04:05.000"), where))
		}
		if len(seen) == 0 {
			seen = []string{"no node reported a fire"}
		}
		parts = append(parts, fmt.Sprintf("from %s to the next slot: %s", s.UTC().Format("15:04:05"), strings.Join(seen, "; ")))
	}
	return strings.Join(parts, "; ")
}

// checkWorkflows checks workflow edges against the jobs and the ledger's
// executions.
func checkWorkflows(edges []wfEdge, jobs map[uuid.UUID]*ratchet.Job, runsOf map[uuid.UUID][]Execution) []Violation {
	var out []Violation
	var early, unmet, unrun []uuid.UUID
	var earlyEx, unmetEx, unrunEx []string
	into := map[uuid.UUID][]wfEdge{}
	for _, e := range edges {
		into[e.Child] = append(into[e.Child], e)
		p, c := jobs[e.Parent], jobs[e.Child]
		if p == nil || c == nil || len(runsOf[e.Child]) == 0 {
			continue // a missing job is no-job-lost's
		}
		if !e.allow.Allows(p.Status) {
			unmet = append(unmet, e.Child, e.Parent)
			unmetEx = append(unmetEx, fmt.Sprintf("%s ran though its parent %s ended %s", e.Child, e.Parent, p.Status))
			continue
		}
		pf := final(p, runsOf[e.Parent])
		if pf == nil {
			continue // no execution finalized the parent (at-least-once checks those that succeeded)
		}
		for _, r := range runsOf[e.Child] {
			if r.StartedAt.Before(pf.EndedAt) {
				early = append(early, e.Child, e.Parent)
				earlyEx = append(earlyEx, fmt.Sprintf("%s started at %s on %s, before its parent %s's finalizing execution ended at %s",
					e.Child, stamp(r.StartedAt), r.Node, e.Parent, stamp(pf.EndedAt)))
				break
			}
		}
	}
	for _, child := range slices.SortedFunc(maps.Keys(into), compareIDs) {
		c := jobs[child]
		if c == nil || (c.Status != ratchet.StatusSkipped && c.Status != ratchet.StatusCancelled) {
			continue
		}
		all := true
		for _, e := range into[child] {
			j := jobs[e.Parent]
			all = all && j != nil && e.allow.Allows(j.Status) && !e.cond && (!e.app || spi.CancelledByDependency(c.LastError))
		}
		if all {
			unrun = append(unrun, child)
			unrunEx = append(unrunEx, fmt.Sprintf("%s ended %s (%s)", child, c.Status, c.LastError))
		}
	}
	if len(early) > 0 {
		out = append(out, Violation{Invariant: InvWorkflowOrder, Jobs: sortIDs(early),
			Detail: fmt.Sprintf("%d children ran before a parent had finished: %s", len(earlyEx), examples(earlyEx))})
	}
	if len(unmet) > 0 {
		out = append(out, Violation{Invariant: InvWorkflowOrder, Jobs: sortIDs(unmet),
			Detail: fmt.Sprintf("%d children ran though a parent ended in a state their dependency does not allow: %s", len(unmetEx), examples(unmetEx))})
	}
	if len(unrun) > 0 {
		out = append(out, Violation{Invariant: InvWorkflowOrder, Jobs: sortIDs(unrun),
			Detail: fmt.Sprintf("%d children did not run though every parent ended as their dependency allows: %s", len(unrunEx), examples(unrunEx))})
	}
	return out
}

// final returns the execution that finalized j, SUCCEEDED (finishing) or
// FAILED by its body's error: by its owner, under its final claim.
func final(j *ratchet.Job, runs []Execution) *Execution {
	if j.Status == ratchet.StatusSucceeded {
		return finishing(j, runs)
	}
	if j.Status != ratchet.StatusFailed {
		return nil
	}
	for i, r := range runs {
		if (r.Outcome == OutcomeError || r.Outcome == OutcomePanic) && r.Node == j.OwnerNode && r.ClaimSeq == j.ClaimSeq && !r.EndedAt.IsZero() {
			return &runs[i]
		}
	}
	return nil
}

// appEdges returns the edges of the application's workflows: the
// dependencies the store keeps of every job with some that is not a
// probe workflow's.
func appEdges(ctx context.Context, ws spi.WorkflowStore, probe []wfEdge, jobs map[uuid.UUID]*ratchet.Job) ([]wfEdge, error) {
	if ws == nil {
		return nil, nil
	}
	probed := map[uuid.UUID]bool{}
	for _, e := range probe {
		probed[e.Child] = true
	}
	var out []wfEdge
	for _, id := range slices.SortedFunc(maps.Keys(jobs), compareIDs) {
		if jobs[id].DependencyCount == 0 || probed[id] {
			continue
		}
		deps, err := ws.Dependencies(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("chaos: read the dependencies of %s: %w", id, err)
		}
		for _, d := range deps {
			if d.Allow&spi.AllowSequence != 0 {
				continue // a sequence's link: the sequence probes' (sequence checks them)
			}
			out = append(out, wfEdge{Parent: d.ParentID, Child: id, allow: d.Allow, cond: d.Condition != "", app: true})
		}
	}
	return out, nil
}

func compareIDs(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) }

// sortIDs sorts ids and drops repeats.
func sortIDs(ids []uuid.UUID) []uuid.UUID {
	slices.SortFunc(ids, compareIDs)
	return slices.Compact(ids)
}

// stamp is a ledger time for a report.
func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000000") }

// slotList names up to 10 slots.
func slotList(ts []time.Time) string {
	var s []string
	for i, t := range ts {
		if i == 10 {
			s = append(s, fmt.Sprintf("and %d more", len(ts)-10))
			break
		}
		s = append(s, t.UTC().Format(time.RFC3339))
	}
	return strings.Join(s, ", ")
}

// examples joins up to 5 descriptions.
func examples(ex []string) string {
	if len(ex) > 5 {
		return strings.Join(ex[:5], "; ") + fmt.Sprintf("; and %d more", len(ex)-5)
	}
	return strings.Join(ex, "; ")
}
