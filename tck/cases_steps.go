package tck

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// stepsNS is the namespace of the durable steps' log
// (ratchet.StepsNamespace).
const stepsNS = "ratchet.steps"

// The cases of durable steps (ratchet.RunStep, ratchet.Sleep): each run
// appends to the job's step log with a state write fenced by its claim.
// The log outlives the run (a snooze, a retry, a recovery) and is the
// next claim's to extend; a run whose claim was taken cannot write it.
func durableStepCases() []testCase {
	return []testCase{
		{"LogSurvivesRuns", func(t tb, f *fixture) {
			ss := f.states()
			j := f.insertOne(withMaxRetries(3))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			r, err := ss.InitState(f.ctx, j.ID, stepsNS, []byte(`{"steps":[{"kind":"step","name":"charge"}]}`), c.ClaimSeq)
			require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "the first run records a step"))
			require.Equal(t, []bool{true}, f.complete(snoozed(c, at(2*time.Second), at(time.Hour), 1)), "the run sleeps (a snooze)")
			c = f.claimOne(j.ID, "node-b", at(time.Hour))
			f.assertState(ss, j.ID, stepsNS, `{"steps":[{"kind":"step","name":"charge"}]}`, 0, "the next run reads the log")
			r, err = ss.UpdateState(f.ctx, j.ID, stepsNS, []byte(`{"steps":[{"kind":"step","name":"charge"},{"kind":"step","name":"mail"}]}`), 0, c.ClaimSeq)
			require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "the next run extends it under its own claim"))
			require.Equal(t, []bool{true}, f.complete(retried(c, at(time.Hour+time.Second), at(2*time.Hour), 1, "later step failed")))
			f.claimOne(j.ID, "node-a", at(2*time.Hour))
			f.assertState(ss, j.ID, stepsNS, `{"steps":[{"kind":"step","name":"charge"},{"kind":"step","name":"mail"}]}`, 1, "a retry reads both steps")
		}},
		{"ZombieCannotRecord", func(t tb, f *fixture) {
			// A run whose job was recovered and claimed again writes
			// nothing, before or after the new owner writes.
			ss := f.states()
			j := f.insertOne()
			zombie := f.claimOne(j.ID, "node-a", at(time.Second))
			r, err := ss.InitState(f.ctx, j.ID, stepsNS, []byte(`{"steps":[{"kind":"step","name":"one"}]}`), zombie.ClaimSeq)
			require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "setup: the first run records step one"))
			require.Equal(t, []bool{true}, f.release(at(2*time.Second), ref(zombie)))
			owner := f.claimOne(j.ID, "node-b", at(3*time.Second))
			r, err = ss.UpdateState(f.ctx, j.ID, stepsNS, []byte(`{"steps":[{"kind":"step","name":"one"},{"kind":"step","name":"zombie"}]}`), 0, zombie.ClaimSeq)
			assertWriteResult(t, spi.StateSuperseded, r, err, "the zombie's record of its step in flight")
			r, err = ss.UpdateState(f.ctx, j.ID, stepsNS, []byte(`{"steps":[{"kind":"step","name":"one"},{"kind":"step","name":"two"}]}`), 0, owner.ClaimSeq)
			require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "the owner records step two"))
			r, err = ss.UpdateState(f.ctx, j.ID, stepsNS, []byte(`{"steps":[]}`), 1, zombie.ClaimSeq)
			assertWriteResult(t, spi.StateSuperseded, r, err, "the zombie, even with the current version")
			f.assertState(ss, j.ID, stepsNS, `{"steps":[{"kind":"step","name":"one"},{"kind":"step","name":"two"}]}`, 1, "the owner's log stands")
		}},
	}
}
