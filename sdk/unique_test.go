package ratchet_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// The key covers the task always, the arguments with ByArgs and the
// period with ByPeriod; each job of a SubmitMany gets its own.
func TestUniqueKeys(t *testing.T) {
	var last []*spi.Job
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 7, 10, 59, 0, 0, time.UTC))
	c, err := ratchet.NewClient(uniqueDiscard{discardStore{last: &last}}, ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	ctx := context.Background()
	key := func(task *ratchet.Task[Invoice, string], in Invoice, o ratchet.UniqueOpts) string {
		_, err := task.Submit(ctx, c, in, ratchet.WithUnique(o))
		require.NoError(t, err)
		require.NotNil(t, last[0].Unique)
		return last[0].Unique.Key
	}
	other := ratchet.NewTask("invoice.other", func(context.Context, Invoice) (string, error) { return "", nil })
	acme, globex := Invoice{Customer: "acme"}, Invoice{Customer: "globex"}
	byTask := key(bill, acme, ratchet.UniqueOpts{})
	assert.Equal(t, byTask, key(bill, globex, ratchet.UniqueOpts{}), "arguments are ignored without ByArgs")
	assert.NotEqual(t, byTask, key(other, acme, ratchet.UniqueOpts{}), "the task is always covered")
	assert.NotEqual(t, key(bill, acme, ratchet.UniqueOpts{ByArgs: true}), key(bill, globex, ratchet.UniqueOpts{ByArgs: true}))
	hourly := ratchet.UniqueOpts{ByPeriod: time.Hour}
	h10 := key(bill, acme, hourly)
	clock.Advance(30 * time.Second)
	assert.Equal(t, h10, key(bill, acme, hourly), "10:59:30 is in the hour of 10:59")
	clock.Advance(time.Minute)
	assert.NotEqual(t, h10, key(bill, acme, hourly), "11:00:30 is in the next hour")
	assert.Equal(t, ratchet.DefaultUniqueStates, last[0].Unique.States, "the default states")

	_, err = bill.SubmitMany(ctx, c, []Invoice{acme, globex, acme}, ratchet.WithUnique(ratchet.UniqueOpts{ByArgs: true}))
	require.NoError(t, err)
	require.Len(t, last, 3)
	assert.NotEqual(t, last[0].Unique.Key, last[1].Unique.Key)
	assert.Equal(t, last[0].Unique.Key, last[2].Unique.Key)
}

// uniqueDiscard is a discardStore that keeps unique keys, as far as the
// client can tell.
type uniqueDiscard struct{ discardStore }

func (uniqueDiscard) UniqueHolder(context.Context, string) (uuid.UUID, error) { return uuid.Nil, nil }

// A unique submission that cannot be one fails before anything is written.
func TestUniqueRefused(t *testing.T) {
	ctx := context.Background()
	mem, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	u := ratchet.WithUnique(ratchet.UniqueOpts{})
	_, err = bill.Submit(ctx, mem, Invoice{}, u, ratchet.WithIdempotencyKey("k"))
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "with an idempotency key")
	_, err = bill.Submit(ctx, mem, Invoice{}, ratchet.WithUnique(ratchet.UniqueOpts{ByState: []ratchet.Status{"DONE"}}))
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "an unknown state")
	assert.ErrorContains(t, err, `"DONE"`)
	_, err = bill.Submit(ctx, mem, Invoice{}, ratchet.WithUnique(ratchet.UniqueOpts{ByPeriod: -time.Second}))
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "a negative period")
	wf := ratchet.NewWorkflow()
	wf.Add(bill.With(Invoice{}, u))
	_, err = mem.SubmitWorkflow(ctx, wf)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "a workflow step")

	plain, err := ratchet.NewClient(discardStore{}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = bill.Submit(ctx, plain, Invoice{}, u)
	assert.ErrorIs(t, err, ratchet.ErrUnsupported, "a store without unique keys")
	assert.ErrorContains(t, err, "keeps no unique keys")
}

// A debounced submission that cannot be one fails before anything is
// written.
func TestDebounceRefused(t *testing.T) {
	ctx := context.Background()
	mem, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	d := ratchet.WithDebounce("k", time.Minute)
	for name, opts := range map[string][]ratchet.SubmitOption{
		"an empty key":       {ratchet.WithDebounce("", time.Minute)},
		"no window":          {ratchet.WithDebounce("k", 0)},
		"leading, last args": {ratchet.WithDebounce("k", time.Minute, ratchet.DebounceLeading(), ratchet.DebounceLastArgs())},
		"and unique":         {d, ratchet.WithUnique(ratchet.UniqueOpts{})},
		"and a key":          {d, ratchet.WithIdempotencyKey("k")},
		"and a delay":        {d, ratchet.WithDelay(time.Second)},
	} {
		_, err = bill.Submit(ctx, mem, Invoice{}, opts...)
		assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, name)
	}
	_, err = bill.SubmitMany(ctx, mem, []Invoice{{}, {}}, d)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "many at once")
	sealed, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{identityCodec{}}})
	require.NoError(t, err)
	_, err = bill.Submit(ctx, sealed, Invoice{}, ratchet.WithDebounce("k", time.Minute, ratchet.DebounceLastArgs()))
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "last args with codecs")
	plain, err := ratchet.NewClient(discardStore{}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = bill.Submit(ctx, plain, Invoice{}, d)
	assert.ErrorIs(t, err, ratchet.ErrUnsupported, "a store without unique keys")
}

// A trailing debounce is due at the window's end, a leading one at once;
// both carry the window's end.
func TestDebounceJobs(t *testing.T) {
	var last []*spi.Job
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	c, err := ratchet.NewClient(uniqueDiscard{discardStore{last: &last}}, ratchet.ClientOptions{Clock: clockwork.NewFakeClockAt(now)})
	require.NoError(t, err)
	_, err = bill.Submit(context.Background(), c, Invoice{}, ratchet.WithDebounce("k", time.Minute))
	require.NoError(t, err)
	assert.True(t, last[0].ScheduledAt.Equal(now.Add(time.Minute)), "trailing: due at the window's end")
	assert.Equal(t, []spi.Status{spi.StatusPending}, last[0].Unique.States)
	assert.True(t, last[0].Unique.Until.Equal(now.Add(time.Minute)))
	trailing := last[0].Unique.Key
	_, err = bill.Submit(context.Background(), c, Invoice{}, ratchet.WithDebounce("k", time.Minute, ratchet.DebounceLeading()))
	require.NoError(t, err)
	assert.True(t, last[0].ScheduledAt.Equal(now), "leading: due at once")
	assert.Len(t, last[0].Unique.States, 8, "leading: held in every state")
	assert.Equal(t, trailing, last[0].Unique.Key, "the key is the task's and the debounce key's")
}

// identityCodec is a codec that changes nothing.
type identityCodec struct{}

func (identityCodec) Encode(_ context.Context, _ ratchet.PayloadRef, b []byte) ([]byte, error) {
	return b, nil
}

func (identityCodec) Decode(_ context.Context, _ ratchet.PayloadRef, b []byte) ([]byte, error) {
	return b, nil
}

// joinCounter counts the submissions that joined an earlier job.
type joinCounter struct {
	spi.NoOpMetrics
	joined map[string]int
}

func (m *joinCounter) SubmissionJoined(_ context.Context, task, reason string) {
	m.joined[task+"/"+reason]++
}

// The metrics count each submission that joined an earlier job, by why.
func TestJoinedSubmissionsAreCounted(t *testing.T) {
	ctx := context.Background()
	m := &joinCounter{joined: map[string]int{}}
	c, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{Metrics: m})
	require.NoError(t, err)
	for range 3 {
		_, err = bill.Submit(ctx, c, Invoice{}, ratchet.WithUnique(ratchet.UniqueOpts{}))
		require.NoError(t, err)
		_, err = bill.Submit(ctx, c, Invoice{}, ratchet.WithDebounce("k", time.Hour))
		require.NoError(t, err)
		_, err = bill.Submit(ctx, c, Invoice{}, ratchet.WithIdempotencyKey("k"))
		require.NoError(t, err)
	}
	assert.Equal(t, map[string]int{"invoice.bill/unique": 2, "invoice.bill/debounce": 2, "invoice.bill/idempotency": 2}, m.joined)
}

// A rate limit that cannot be one fails before anything is written.
func TestRateLimitRefused(t *testing.T) {
	ctx := context.Background()
	mem, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	for name, opts := range map[string][]ratchet.SubmitOption{
		"an empty key":      {ratchet.WithRateLimit("", 1, time.Second)},
		"no starts":         {ratchet.WithRateLimit("k", 0, time.Second)},
		"a period too long": {ratchet.WithRateLimit("k", 1, 48*time.Hour)},
		"a nanosecond":      {ratchet.WithRateLimit("k", 1, time.Millisecond+time.Nanosecond)},
		"and a permit":      {ratchet.WithResource("pdf", 2), ratchet.WithRateLimit("k", 1, time.Second)},
		"a permit after":    {ratchet.WithRateLimit("k", 1, time.Second), ratchet.WithResource("pdf", 2)},
		"a reserved name":   {ratchet.WithResource("ratchet.rate:1000000:k", 2)},
	} {
		_, err = bill.Submit(ctx, mem, Invoice{}, opts...)
		assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, name)
	}
	plain, err := ratchet.NewClient(discardStore{}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = bill.Submit(ctx, plain, Invoice{}, ratchet.WithRateLimit("k", 1, time.Second))
	assert.ErrorIs(t, err, ratchet.ErrUnsupported, "a store without rate limits")
}

// One option value serves submissions from many goroutines at once (the
// race detector checks that none changes what the others read).
func TestAdmissionOptionsAreShared(t *testing.T) {
	ctx := context.Background()
	c, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	opts := []ratchet.SubmitOption{ratchet.WithUnique(ratchet.UniqueOpts{ByArgs: true}), ratchet.WithRateLimit("k", 5, time.Second)}
	deb := ratchet.WithDebounce("d", time.Minute, ratchet.DebounceLastArgs())
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := bill.Submit(ctx, c, Invoice{Cents: g % 2}, opts...)
			assert.NoError(t, err)
			_, err = bill.Submit(ctx, c, Invoice{Cents: g}, deb)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
}
