package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The cases of run timeouts (ratchet.WithTimeout): the store keeps the
// timeout in the job's params, hands it to the node that claims the job,
// and fences the late return of a body whose run the engine already ended
// at its timeout.
func runTimeoutCases() []testCase {
	return []testCase{
		{"ParamsReachTheClaim", func(t tb, f *fixture) {
			params := map[string]string{spi.TimeoutParam: "1.5s", spi.TimeoutFinalParam: "1", "app": "x"}
			j := f.insertOne(withParams(params))
			assert.Equal(t, params, f.get(j.ID).Params, "GetJob keeps the timeout params")
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			assert.Equal(t, params, c.Params, "the claimed job carries the timeout params: the node times its run from them")
			d, final, ok := spi.RunTimeout(c)
			assert.True(t, ok && final, "spi.RunTimeout reads them")
			assert.Equal(t, 1500*time.Millisecond, d)
		}},
		{"LateReturnSuperseded", func(t tb, f *fixture) {
			// The engine writes the timeout's retry while the body goes
			// on; the body's late return, under the same claim, is
			// superseded, before and after the retry's next claim.
			j := f.insertOne(withParams(map[string]string{spi.TimeoutParam: "200ms"}), withMaxRetries(3))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			timedOut := at(time.Second + 200*time.Millisecond)
			require.Equal(t, []bool{true}, f.complete(retried(c, timedOut, timedOut, 1, "ratchet: run timed out after 200ms")), "the timeout's retry")
			after := f.get(j.ID)
			assert.Equal(t, []bool{false}, f.complete(succeeded(c, at(3*time.Second), []byte(`1`), "int")), "the late return of the timed-out run is superseded")
			assertJob(t, after, f.get(j.ID), "the late return changes nothing")
			next := f.claimOne(j.ID, "node-b", at(4*time.Second))
			assert.Equal(t, []bool{false}, f.complete(failed(c, at(5*time.Second), 1, "late")), "a late return after the retry's claim is superseded too")
			assertJob(t, next, f.get(j.ID), "the retry's run is untouched")
		}},
	}
}
