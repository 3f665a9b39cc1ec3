package tck

import (
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// fairKey gives a job the lane of fairness key k (spi.FairKeyPrefix
// added).
func fairKey(k string) jobOpt {
	return func(j *spi.Job) { j.Sequence = &spi.Sequence{Key: spi.FairKeyPrefix + k, Fair: true} }
}

// fairStore requires the capabilities of fair share, asking for the
// FairShareStore first so that a store without it skips with that name.
func fairStore(f *fixture) spi.WorkflowStore {
	fs := capability[spi.FairShareStore](f, "spi.FairShareStore")
	if !fs.FairTurns() {
		f.t.Skipf("FairTurns reports false: the claims of the store (%T) pass no fair turns: its cases are skipped", f.s)
	}
	return capability[spi.WorkflowStore](f, "spi.WorkflowStore")
}

// The cases of fair share (spi.FairShareStore): a fairness key holds one
// place in the line of due jobs; its next job waits BLOCKED on the one in
// the line, and a claim of that one lets it go, to the back of the line.
func fairShareCases() []testCase {
	return []testCase{
		{"TakesKeysInTurn", func(t tb, f *fixture) {
			ws := fairStore(f)
			var big, small []*spi.Job
			for range 4 {
				big = append(big, f.insertOne(fairKey("big")))
			}
			for range 2 {
				small = append(small, f.insertOne(fairKey("small")))
			}
			assert.Equal(t, spi.StatusPending, f.get(big[0].ID).Status, "a key's first job is in the line")
			assert.Equal(t, spi.StatusPending, f.get(small[0].ID).Status, "so is another key's")
			for _, j := range append(big[1:], small[1]) {
				assert.Equal(t, spi.StatusBlocked, f.get(j.ID).Status, "a key's later jobs wait")
			}
			assert.Equal(t, []uuid.UUID{big[1].ID}, f.waitsOn(ws, big[2]), "each on the one before it")
			ds := f.deps(ws, big[1])
			require.Len(t, ds, 1)
			assert.Equal(t, spi.TurnAllow, ds[0].Allow, "the link's Allow is TurnAllow")

			// Claims of one job at a time take the keys in turn: each
			// claim sends the key's next job to the back of the line.
			want := []*spi.Job{big[0], small[0], big[1], small[1], big[2], big[3]}
			for i, w := range want {
				now := at(time.Duration(i+1) * time.Second)
				got := f.claim("node-a", 1, now, 0)
				require.Len(t, got, 1, "claim %d", i+1)
				assert.Equal(t, w.ID, got[0].ID, "claim %d takes the keys in turn", i+1)
			}
			b1 := f.get(big[1].ID)
			assert.Equal(t, at(time.Second), b1.ScheduledAt.UTC(), "a job let go by a claim is due at that claim's now")
			ds = f.deps(ws, big[1])
			require.Len(t, ds, 1)
			assert.Equal(t, spi.TurnPassed, ds[0].ParentStatus, "its link records TurnPassed")
		}},
		{"PassesAtClaim", func(t tb, f *fixture) {
			// The turn passes when the job is claimed, not when it
			// finishes; a job inserted while the key's last job runs is in
			// the line at once.
			ws := fairStore(f)
			a := f.insertOne(fairKey("k"))
			b := f.insertOne(fairKey("k"))
			ca := f.claimOne(a.ID, "node-a", at(time.Second))
			assert.Equal(t, 1, ca.Dependents, "a claimed job of a fairness key counts its successor")
			assert.Equal(t, spi.StatusPending, f.get(b.ID).Status, "the claim let the next job go")
			c := f.insertOne(fairKey("k"))
			assert.Equal(t, []uuid.UUID{b.ID}, f.waitsOn(ws, c), "a job inserted behind one in the line waits")
			f.claimOne(b.ID, "node-a", at(2*time.Second))
			assert.Equal(t, spi.StatusPending, f.get(c.ID).Status)
			f.claimOne(c.ID, "node-a", at(3*time.Second))
			d := f.insertOne(fairKey("k"))
			assert.Equal(t, spi.StatusPending, f.get(d.ID).Status, "behind a running job a job is in the line at once")
			done := spi.Completion{ClaimRef: ref(ca), Outcome: spi.OutcomeSucceeded, FinishedAt: at(4 * time.Second), HasDependents: true}
			require.Equal(t, []bool{true}, f.complete(done), "a completion after the turn passed")
			ds := f.deps(ws, b)
			require.Len(t, ds, 1)
			assert.Equal(t, spi.TurnPassed, ds[0].ParentStatus, "leaves the passed link as it was")
		}},
		{"CancelHandsOver", func(t tb, f *fixture) {
			// A cancelled waiting job leaves the key's line: the next one
			// waits on the one before it. A cancelled job in the line lets
			// the next one go.
			ws := fairStore(f)
			a := f.insertOne(fairKey("c"))
			b := f.insertOne(fairKey("c"))
			c := f.insertOne(fairKey("c"))
			require.NoError(t, f.s.CancelJob(f.ctx, b.ID, at(time.Second)), "CancelJob of a waiting job")
			assert.Equal(t, []uuid.UUID{a.ID}, f.waitsOn(ws, c), "the next job waits on the one before the cancelled one")
			require.NoError(t, f.s.CancelJob(f.ctx, a.ID, at(2*time.Second)), "CancelJob of the job in the line")
			assert.Equal(t, spi.StatusPending, f.get(c.ID).Status, "lets the next one go")
		}},
		{"LevelsStayApart", func(t tb, f *fixture) {
			// Fair turns work within a priority level: a higher level's
			// job passes a lower one's whatever its key's turn.
			fairStore(f)
			low := f.insertOne(fairKey("p"), withPriority(spi.PriorityLow))
			f.insertOne(fairKey("p"), withPriority(spi.PriorityLow))
			high := f.insertOne(fairKey("q"), withPriority(spi.PriorityHigh))
			got := f.claim("node-a", 1, at(time.Second), 0)
			require.Len(t, got, 1)
			assert.Equal(t, high.ID, got[0].ID, "the higher level first")
			got = f.claim("node-a", 1, at(2*time.Second), 0)
			require.Len(t, got, 1)
			assert.Equal(t, low.ID, got[0].ID)
		}},
	}
}
