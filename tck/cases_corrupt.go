package tck

import (
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// needCorrupt skips the case when the harness has no Corrupt hook.
func (f *fixture) needCorrupt() {
	f.t.Helper()
	if f.h.corrupt == nil {
		f.t.Skipf("Harness.Corrupt is nil: corrupted-row cases skipped")
	}
}

// corrupt damages job u with the harness hook.
func (f *fixture) corrupt(u uuid.UUID) {
	f.t.Helper()
	f.needCorrupt()
	f.h.corrupt(f.t, f.s, u)
}

func corruptCases() []testCase {
	return []testCase{
		{"GetJob", func(t tb, f *fixture) {
			f.needCorrupt()
			bad := f.insertOne()
			good := f.insertOne()
			f.corrupt(bad.ID)
			noPanic(t, "GetJob of a corrupt row", func() {
				_, err := f.s.GetJob(f.ctx, bad.ID)
				require.Error(t, err, "GetJob of a corrupt row must fail")
				assert.ErrorIs(t, err, spi.ErrCorruptJob, "GetJob of a corrupt row must wrap spi.ErrCorruptJob")
				assert.Contains(t, err.Error(), bad.ID.String(), "the error must name the job")
			})
			assertJob(t, good, f.get(good.ID), "another job is unaffected")
		}},
		{"ListJobs", func(t tb, f *fixture) {
			// A list that reaches a corrupt row fails with ErrCorruptJob; it
			// does not silently leave the job out.
			f.needCorrupt()
			bad := f.insertOne(withDue(at(10 * time.Hour)))
			other := f.insertOne()
			c := f.claimOne(other.ID, "node-a", at(time.Second))
			f.insertOne(withDue(at(time.Hour)))
			f.corrupt(bad.ID)
			for _, st := range []spi.Status{spi.StatusPending, ""} {
				noPanic(t, "ListJobs over a corrupt row", func() {
					jobs, _, err := f.s.ListJobs(f.ctx, spi.ListParams{Status: st})
					assert.ErrorIs(t, err, spi.ErrCorruptJob, "ListJobs(Status %q) over a corrupt row must wrap spi.ErrCorruptJob (got %d jobs)", st, len(jobs))
				})
			}
			noPanic(t, "ListJobs of another status", func() {
				jobs, _, err := f.s.ListJobs(f.ctx, spi.ListParams{Status: spi.StatusRunning})
				require.NoError(t, err, "ListJobs of a status without corrupt rows is unaffected")
				require.Len(t, jobs, 1)
				assertJob(t, c, jobs[0], "listed RUNNING job")
			})
		}},
		{"ClaimNoPanic", func(t tb, f *fixture) {
			f.needCorrupt()
			// What a claim does with a corrupt due row is the store's choice
			// (the contract says nothing); it must not panic.
			bad := f.insertOne(withPriority(spi.PriorityCritical))
			f.insertOne()
			f.corrupt(bad.ID)
			noPanic(t, "ClaimJobs over a corrupt row", func() {
				jobs, err := f.s.ClaimJobs(f.ctx, spi.ClaimParams{NodeID: "node-a", Limit: 10, Now: at(time.Minute), BoostInterval: boost})
				t.Logf("ClaimJobs over a corrupt row: %d jobs, error %v", len(jobs), err)
				if err != nil {
					assert.ErrorIs(t, err, spi.ErrCorruptJob, "a claim that fails on a corrupt row wraps spi.ErrCorruptJob")
				}
			})
		}},
	}
}

func closeCases() []testCase {
	return []testCase{
		{"Twice", func(t tb, f *fixture) {
			f.insertOne()
			noPanic(t, "Close", func() {
				require.NoError(t, f.s.Close(), "first Close")
				err := f.s.Close()
				if err != nil && !errors.Is(err, spi.ErrClosed) {
					t.Errorf("a second Close must be harmless: got %v (nil or spi.ErrClosed expected)", err)
				}
			})
		}},
		{"UseAfterClose", func(t tb, f *fixture) {
			j := f.insertOne()
			require.NoError(t, f.s.Close())
			noPanic(t, "use after Close", func() {
				_, err := f.s.GetJob(f.ctx, j.ID)
				assert.ErrorIs(t, err, spi.ErrClosed, "GetJob after Close")
				_, err = f.s.InsertJobs(f.ctx, []*spi.Job{f.newJob()}, spi.InsertOptions{})
				assert.ErrorIs(t, err, spi.ErrClosed, "InsertJobs after Close")
				_, err = f.s.ClaimJobs(f.ctx, spi.ClaimParams{NodeID: "n", Limit: 1, Now: at(time.Hour)})
				assert.ErrorIs(t, err, spi.ErrClosed, "ClaimJobs after Close")
			})
		}},
	}
}
