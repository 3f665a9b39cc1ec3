package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/cron"
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
	// InvWorkflowOrder: in the probe workflows, no execution of a child
	// started (by the database's clock, in the ledger) before the
	// finalizing execution of each of its parents ended; a child ran
	// only when every parent SUCCEEDED, and did run when they all did.
	InvWorkflowOrder = "workflow-order"
)

// checkSlots checks the jobs of one probe schedule against its slots; it
// returns the violations and the number of slots that had to fire.
func checkSlots(sr *scheduleRun, jobs map[uuid.UUID]*ratchet.Job) ([]Violation, int) {
	sched, err := cron.Parse(sr.Expr, "")
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
			Detail: fmt.Sprintf("schedule %s (misfire %s) fired no job for %d of its %d slots in the fault phase, though a node was always up (%d slots counted as skipped): %s",
				sr.ID, sr.Misfire, len(missing), len(expected), sr.Skipped, slotList(missing))})
	}
	if len(straySlots) > 0 {
		out = append(out, Violation{Invariant: InvRecurringSlots, Jobs: sortIDs(strayIDs), Slots: straySlots,
			Detail: fmt.Sprintf("schedule %s fired %d jobs for slots outside its slots from %s to %s: %s", sr.ID, len(strayIDs),
				sr.Registered.UTC().Format(time.RFC3339), sr.Next.UTC().Format(time.RFC3339), slotList(straySlots))})
	}
	return out, len(expected)
}

// checkWorkflows checks the probe workflows' edges against the jobs and
// the ledger's executions.
func checkWorkflows(edges []Edge, jobs map[uuid.UUID]*ratchet.Job, runsOf map[uuid.UUID][]Execution) []Violation {
	var out []Violation
	var early, unmet, unrun []uuid.UUID
	var earlyEx, unmetEx, unrunEx []string
	parents := map[uuid.UUID][]uuid.UUID{}
	for _, e := range edges {
		parents[e.Child] = append(parents[e.Child], e.Parent)
		p, c := jobs[e.Parent], jobs[e.Child]
		if p == nil || c == nil || len(runsOf[e.Child]) == 0 {
			continue // a missing job is no-job-lost's
		}
		if p.Status != ratchet.StatusSucceeded {
			unmet = append(unmet, e.Child, e.Parent)
			unmetEx = append(unmetEx, fmt.Sprintf("%s ran though its parent %s ended %s", e.Child, e.Parent, p.Status))
			continue
		}
		pf := finishing(p, runsOf[e.Parent])
		if pf == nil {
			continue // a SUCCEEDED job without its execution is at-least-once's
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
	for _, child := range slices.SortedFunc(maps.Keys(parents), compareIDs) {
		c := jobs[child]
		if c == nil || (c.Status != ratchet.StatusSkipped && c.Status != ratchet.StatusCancelled) {
			continue
		}
		all := true
		for _, p := range parents[child] {
			if j := jobs[p]; j == nil || j.Status != ratchet.StatusSucceeded {
				all = false
			}
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
			Detail: fmt.Sprintf("%d children ran though a parent did not succeed: %s", len(unmetEx), examples(unmetEx))})
	}
	if len(unrun) > 0 {
		out = append(out, Violation{Invariant: InvWorkflowOrder, Jobs: sortIDs(unrun),
			Detail: fmt.Sprintf("%d children did not run though every parent succeeded: %s", len(unrunEx), examples(unrunEx))})
	}
	return out
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
