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

// fairDiscard is a seqDiscard whose claims pass fair turns.
type fairDiscard struct{ seqDiscard }

func (fairDiscard) Capabilities() spi.Capabilities {
	m := spi.CapabilitiesOf(memory.New())
	return spi.Capabilities{Sequences: m.Sequences, Workflows: m.Workflows, FairShare: m.FairShare}
}

// A fairness key covers the caller's key and, with a weight, the job's
// lane, drawn from its id: weight w spreads a key's jobs over w lanes.
func TestFairnessKeys(t *testing.T) {
	var last []*spi.Job
	c, err := ratchet.NewClient(fairDiscard{seqDiscard{discardStore{last: &last}}}, ratchet.ClientOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = bill.SubmitMany(ctx, c, []Invoice{{Customer: "acme"}, {Customer: "globex"}}, ratchet.WithFairnessKey("tenant-1"))
	require.NoError(t, err)
	require.Len(t, last, 2)
	a := last[0].Sequence
	require.NotNil(t, a)
	assert.Equal(t, a.Key, last[1].Sequence.Key, "other arguments, one lane")
	assert.True(t, strings.HasPrefix(a.Key, spi.FairKeyPrefix))
	assert.True(t, a.Fair)
	assert.False(t, a.Hold)
	_, err = bill.Submit(ctx, c, Invoice{}, ratchet.WithSequenceKey("tenant-1"))
	require.NoError(t, err)
	assert.NotEqual(t, a.Key, last[0].Sequence.Key, "a sequence of the same name is another key")

	batch := make([]Invoice, 200)
	_, err = bill.SubmitMany(ctx, c, batch, ratchet.WithFairnessKey("tenant-2", ratchet.FairnessWeight(4)))
	require.NoError(t, err)
	lanes := map[string]int{}
	for _, j := range last {
		lanes[j.Sequence.Key]++
	}
	assert.Len(t, lanes, 4, "weight 4, four lanes")
	for k, n := range lanes {
		assert.Greater(t, n, 20, "lane %s takes its share of 200 jobs", k)
	}
}

// What cannot share fairly is refused with a clear error.
func TestFairnessKeyRefused(t *testing.T) {
	c, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	fair := ratchet.WithFairnessKey("k")
	for name, tc := range map[string]struct {
		opts []ratchet.SubmitOption
		want string
	}{
		"empty key":    {[]ratchet.SubmitOption{ratchet.WithFairnessKey("")}, "1 to 200 bytes"},
		"long key":     {[]ratchet.SubmitOption{ratchet.WithFairnessKey(strings.Repeat("k", ratchet.MaxFairnessKeyBytes+1))}, "1 to 200 bytes"},
		"weight 0":     {[]ratchet.SubmitOption{ratchet.WithFairnessKey("k", ratchet.FairnessWeight(0))}, "weight must be 1 to 100"},
		"weight 101":   {[]ratchet.SubmitOption{ratchet.WithFairnessKey("k", ratchet.FairnessWeight(101))}, "weight must be 1 to 100"},
		"and sequence": {[]ratchet.SubmitOption{fair, ratchet.WithSequenceKey("k")}, "give one"},
		"unique":       {[]ratchet.SubmitOption{fair, ratchet.WithUnique(ratchet.UniqueOpts{})}, "WithFairnessKey goes with neither"},
		"signal":       {[]ratchet.SubmitOption{fair, ratchet.AwaitSignal("go", time.Minute)}, "AwaitSignal and WithFairnessKey"},
	} {
		_, err := bill.Submit(ctx, c, Invoice{}, tc.opts...)
		assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, name)
		assert.ErrorContains(t, err, tc.want, name)
	}
	wf := ratchet.NewWorkflow()
	wf.Add(bill.With(Invoice{}, fair))
	_, err = c.SubmitWorkflow(ctx, wf)
	assert.ErrorContains(t, err, "cannot have WithFairnessKey")
	seqOnly, err := ratchet.NewClient(seqDiscard{discardStore{}}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = bill.Submit(ctx, seqOnly, Invoice{}, fair)
	assert.ErrorIs(t, err, ratchet.ErrUnsupported, "a store whose claims pass no turns")
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
	assert.ErrorContains(t, err, "cannot have WithSequenceKey")
}
