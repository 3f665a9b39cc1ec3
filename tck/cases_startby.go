package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The cases of start-by deadlines (ratchet.WithStartBy): the store keeps
// the deadline in the job's params and hands it to the node that claims
// the job; a node that claims it too late writes the expiry's failure,
// which ends the job FAILED with its retries unspent.
func startByCases() []testCase {
	return []testCase{
		{"ParamsReachTheClaim", func(t tb, f *fixture) {
			by := at(2 * time.Second).UTC()
			params := map[string]string{spi.StartByParam: by.Format(time.RFC3339Nano)}
			j := f.insertOne(withParams(params))
			assert.Equal(t, params, f.get(j.ID).Params, "GetJob keeps the start-by param")
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			got, ok := spi.StartBy(c)
			require.True(t, ok, "the claimed job carries its start-by deadline: the node decides from it")
			assert.True(t, got.Equal(by), "the deadline %s comes back as %s", by, got)
		}},
		{"WindowReachesTheClaim", func(t tb, f *fixture) {
			// A start-within window counts from the due time the claimed
			// job carries; with a deadline too, the earlier time holds.
			params := map[string]string{spi.StartWithinParam: "3s"}
			j := f.insertOne(withParams(params))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			got, ok := spi.StartBy(c)
			require.True(t, ok, "the claimed job carries its window")
			assert.True(t, got.Equal(c.ScheduledAt.Add(3*time.Second)), "due %s + 3s, got %s", c.ScheduledAt, got)
			both := map[string]string{spi.StartWithinParam: "1h", spi.StartByParam: at(2 * time.Second).Format(time.RFC3339Nano)}
			k := f.insertOne(withParams(both))
			got, _ = spi.StartBy(f.claimOne(k.ID, "node-a", at(time.Second)))
			assert.True(t, got.Equal(at(2*time.Second)), "the earlier of deadline and window: %s", got)
		}},
		{"ExpiredEndsFailed", func(t tb, f *fixture) {
			// Claimed past its deadline with three retries left: the
			// node's expiry write ends it FAILED, not PENDING again.
			by := at(time.Second)
			j := f.insertOne(withParams(map[string]string{spi.StartByParam: by.Format(time.RFC3339Nano)}), withMaxRetries(3))
			c := f.claimOne(j.ID, "node-a", at(5*time.Second))
			expiry := "do not retry: ratchet: start-by deadline passed: not started by " + by.UTC().Format(time.RFC3339Nano)
			require.Equal(t, []bool{true}, f.complete(failed(c, at(5*time.Second), 1, expiry)), "the node's expiry write")
			got := f.get(j.ID)
			assert.Equal(t, spi.StatusFailed, got.Status)
			assert.Equal(t, expiry, got.LastError)
			assert.Equal(t, 1, got.Attempts, "one attempt charged, two retries unspent")
			assert.Empty(t, f.claim("node-b", 10, at(time.Minute), 0), "an expired job is never claimed again")
		}},
	}
}
