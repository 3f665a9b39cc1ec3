package ratchet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A sequence's key covers the caller's key only (not the task nor the
// arguments); the policy rides on each job.
func TestSequenceKeys(t *testing.T) {
	var last []*spi.Job
	c, err := ratchet.NewClient(seqDiscard{discardStore{last: &last}}, ratchet.ClientOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = bill.SubmitMany(ctx, c, []Invoice{{Customer: "acme"}, {Customer: "globex"}}, ratchet.WithSequenceKey("order-1"))
	require.NoError(t, err)
	require.Len(t, last, 2)
	a, b := last[0].Sequence, last[1].Sequence
	require.NotNil(t, a)
	assert.Equal(t, a.Key, b.Key, "other arguments, one sequence")
	assert.True(t, strings.HasPrefix(a.Key, spi.SequenceKeyPrefix))
	assert.True(t, a.Hold, "a failure holds by default")
	other := ratchet.NewTask("invoice.other", func(context.Context, Invoice) (string, error) { return "", nil })
	_, err = other.Submit(ctx, c, Invoice{}, ratchet.WithSequenceKey("order-1", ratchet.SequenceContinueOnFailure()))
	require.NoError(t, err)
	assert.Equal(t, a.Key, last[0].Sequence.Key, "another task, one sequence")
	assert.False(t, last[0].Sequence.Hold)
}

// seqDiscard is a discardStore that says it keeps sequences (a memory
// store's capabilities stand in).
type seqDiscard struct{ discardStore }

func (seqDiscard) Capabilities() spi.Capabilities {
	m := spi.CapabilitiesOf(memory.New())
	return spi.Capabilities{Sequences: m.Sequences, Workflows: m.Workflows}
}

// What cannot be sequenced is refused with a clear error.
func TestSequenceRefused(t *testing.T) {
	c, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	seq := ratchet.WithSequenceKey("k")
	for name, opts := range map[string][]ratchet.SubmitOption{
		"empty key": {ratchet.WithSequenceKey("")},
		"long key":  {ratchet.WithSequenceKey(strings.Repeat("k", ratchet.MaxSequenceKeyBytes+1))},
		"unique":    {seq, ratchet.WithUnique(ratchet.UniqueOpts{})},
		"signal":    {seq, ratchet.AwaitSignal("go", time.Minute)},
	} {
		_, err := bill.Submit(ctx, c, Invoice{}, opts...)
		assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, name)
	}
	wf := ratchet.NewWorkflow()
	wf.Add(bill.With(Invoice{}, seq))
	_, err = c.SubmitWorkflow(ctx, wf)
	assert.ErrorContains(t, err, "cannot be in a sequence")
}
