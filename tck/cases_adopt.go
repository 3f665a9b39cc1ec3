package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// adopt runs AdoptClaims, failing the case on an error.
func (f *fixture) adopt(a spi.ClaimAdopter, node string, claimedAt ...time.Time) []*spi.Job {
	f.t.Helper()
	jobs, err := a.AdoptClaims(f.ctx, node, claimedAt)
	require.NoError(f.t, err, "AdoptClaims(node %q, %v)", node, claimedAt)
	return jobs
}

// refs returns the claim refs of jobs.
func refs(jobs []*spi.Job) []spi.ClaimRef {
	out := make([]spi.ClaimRef, len(jobs))
	for i, j := range jobs {
		out[i] = ref(j)
	}
	return out
}

// adoptCases check spi.ClaimAdopter: the jobs of a claim whose answer was
// lost are found by the node and the claim's time, with the claim
// sequence the claim gave them, and nothing else is.
func adoptCases() []testCase {
	return []testCase{
		{"LostClaim", func(t tb, f *fixture) {
			a := capability[spi.ClaimAdopter](f, "spi.ClaimAdopter")
			f.insertN(6)
			t1, t2 := at(time.Second), at(2*time.Second)
			lost := f.claim("node-a", 2, t1, 0) // the answer that never reached node-a
			other := f.claim("node-b", 2, t1, 0)
			later := f.claim("node-a", 1, t2, 0)
			require.Len(t, lost, 2)
			require.Len(t, other, 2)
			require.Len(t, later, 1)
			got := f.adopt(a, "node-a", t1)
			assert.ElementsMatch(t, refs(lost), refs(got), "the jobs node-a claimed at t1, with their claim sequences; not node-b's of the same time, nor node-a's of t2")
			for _, j := range got {
				assert.Equal(t, spi.StatusRunning, j.Status)
				assert.Equal(t, "node-a", j.OwnerNode)
				assert.True(t, j.ClaimedAt.Equal(t1), "claimed at t1: %s", j.ClaimedAt)
			}
			assert.ElementsMatch(t, refs(append(append([]*spi.Job{}, lost...), later...)), refs(f.adopt(a, "node-a", t1, t2)), "two claim times")
			assert.Empty(t, f.adopt(a, "node-a", at(3*time.Second)), "a time of no claim")
			assert.Empty(t, f.adopt(a, "node-a"), "no time")
			assert.Empty(t, f.adopt(a, "node-c", t1), "a node that claimed nothing")
		}},
		{"OnlyRunning", func(t tb, f *fixture) {
			// Jobs of the claim that left RUNNING since (finished,
			// released, recovered by another node's scan) are not adopted.
			a := capability[spi.ClaimAdopter](f, "spi.ClaimAdopter")
			f.insertN(3)
			t1 := at(time.Second)
			cs := f.claim("node-a", 3, t1, 0)
			require.Len(t, cs, 3)
			later := t1.Add(time.Second)
			require.Equal(t, []bool{true}, f.complete(succeeded(cs[0], later, nil, "")))
			require.Equal(t, []bool{true}, f.release(later, ref(cs[1])))
			got := f.adopt(a, "node-a", t1)
			assert.Equal(t, []spi.ClaimRef{ref(cs[2])}, refs(got), "only the job still RUNNING")
		}},
	}
}
