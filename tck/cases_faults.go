package tck

import (
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func faultCases() []testCase {
	return []testCase{
		{"ConnectionLossLosesNothing", func(t tb, f *fixture) {
			// Connections die between claims and completions. Each call
			// either succeeds (the store retried) or returns an error (the
			// caller retries); in the end every job is SUCCEEDED, finalized
			// exactly once, and none is lost or left stuck.
			if f.h.breakConns == nil {
				t.Skipf("Harness.BreakConnections is nil: the fault cases need it")
			}
			const n = 40
			ids := map[uuid.UUID]bool{}
			for range n {
				ids[f.insertOne().ID] = true
			}
			now := at(time.Minute)
			finalized := map[uuid.UUID]int{}
			errs := 0
			for round := 0; round < 60 && len(finalized) < n; round++ {
				// Rounds alternate: connections cut before the claim, cut
				// before the completion, and left alone.
				if round%3 == 0 {
					f.h.breakConns(t, f.s)
				}
				jobs, err := f.s.ClaimJobs(f.ctx, spi.ClaimParams{NodeID: "faulty", Limit: 10, Now: now})
				if err != nil {
					errs++
					t.Logf("round %d: claim failed: %v", round, err)
					// A claim whose outcome was lost may have committed:
					// recover this node's jobs as a restarted node would.
					_, err := f.s.RecoverOrphans(f.ctx, spi.RecoverParams{Now: now, Grace: time.Hour, MaxCrashRedeliveries: 1000, Nodes: []string{"faulty"}})
					if err != nil {
						t.Logf("round %d: recovery failed too: %v", round, err)
					}
					continue
				}
				if round%3 == 1 {
					f.h.breakConns(t, f.s)
				}
				cs := make([]spi.Completion, len(jobs))
				for i, j := range jobs {
					require.True(t, ids[j.ID], "claimed a job that was never inserted: %s", j.ID)
					cs[i] = spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeSucceeded, FinishedAt: now}
				}
				for attempt := 0; attempt < 5 && len(cs) > 0; attempt++ {
					applied, err := f.s.CompleteJobs(f.ctx, cs)
					if err != nil {
						errs++
						t.Logf("round %d: complete failed: %v", round, err)
						continue
					}
					for i, ok := range applied {
						if ok {
							finalized[cs[i].JobID]++
						}
					}
					break
				}
				// Jobs whose completion never went through stay RUNNING
				// under "faulty": the recovery above or below hands them out
				// again.
				if _, err := f.s.RecoverOrphans(f.ctx, spi.RecoverParams{Now: now, Grace: time.Hour, MaxCrashRedeliveries: 1000, Nodes: []string{"faulty"}}); err != nil {
					errs++
				}
			}
			t.Logf("%d calls returned errors", errs)
			all := f.listAll("")
			assert.Len(t, all, n, "no job lost or duplicated")
			for _, j := range all {
				assert.Equal(t, spi.StatusSucceeded, j.Status, "job %s", j.ID)
				assert.LessOrEqual(t, finalized[j.ID], 1, "job %s: at most one completion reported applied", j.ID)
			}
		}},
	}
}
