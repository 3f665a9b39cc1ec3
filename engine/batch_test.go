package engine_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// finishSpy is a memory store whose FinishBatches reports each pass, and
// whose AddBatchChunk fails while failChunks is set.
type finishSpy struct {
	*memory.Store
	calls      chan []spi.FinishedBatch
	mu         sync.Mutex
	failChunks int // the next failChunks chunk writes fail
}

func (s *finishSpy) FinishBatches(ctx context.Context, now time.Time, limit int) ([]spi.FinishedBatch, error) {
	out, err := s.Store.FinishBatches(ctx, now, limit)
	if s.calls != nil {
		select {
		case s.calls <- out:
		case <-ctx.Done():
		}
	}
	return out, err
}

var errChunkLost = errors.New("connection reset")

func (s *finishSpy) AddBatchChunk(ctx context.Context, c spi.BatchChunk) (int64, error) {
	s.mu.Lock()
	fail := s.failChunks > 0
	if fail {
		s.failChunks--
	}
	s.mu.Unlock()
	if fail {
		return 0, errChunkLost
	}
	return s.Store.AddBatchChunk(ctx, c)
}

// batchRig runs task "item" (which fails item n when fail[n]) and the
// callbacks "batch.done" and "batch.failed", which report their batch's
// status on ended.
type batchRig struct {
	spy    *finishSpy
	eng    *engine.Engine
	client *ratchet.Client
	item   *ratchet.Task[int, ratchet.Void]
	done   *ratchet.Task[string, ratchet.Void]
	failed *ratchet.Task[string, ratchet.Void]
	ended  chan string
	mu     sync.Mutex
	fail   map[int]bool
}

func startBatches(t *testing.T) *batchRig {
	t.Helper()
	r := &batchRig{spy: &finishSpy{Store: memory.New(), calls: make(chan []spi.FinishedBatch, 1000)},
		ended: make(chan string, 10), fail: map[int]bool{}}
	r.item = ratchet.NewVoidTask("item", func(ctx context.Context, n int) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.fail[n] {
			return ratchet.DoNotRetry(fmt.Errorf("item %d fails", n))
		}
		return nil
	})
	callback := func(name string) *ratchet.Task[string, ratchet.Void] {
		return ratchet.NewVoidTask(name, func(ctx context.Context, label string) error {
			jc, _ := ratchet.JobFromContext(ctx)
			st, err := r.client.Batch(ctx, jc.BatchID())
			if err != nil {
				return err
			}
			r.ended <- fmt.Sprintf("%s %s: %s %s %v", name, label, st.Name, st.Outcome, st.Counts)
			return nil
		})
	}
	r.done, r.failed = callback("batch.done"), callback("batch.failed")
	// A real clock: the finisher passes every 5 ms, and the test waits for
	// the pass that ends its batch.
	eng, err := engine.New(r.spy, engine.Options{
		Client:              ratchet.ClientOptions{Clock: clockwork.NewRealClock(), Logger: quiet},
		NodeID:              "n1",
		BatchFinishInterval: 5 * time.Millisecond,
		MinPollInterval:     time.Millisecond,
		PollInterval:        5 * time.Millisecond,
	},
		r.item, r.done, r.failed)
	require.NoError(t, err)
	require.NoError(t, eng.Start(context.Background()))
	t.Cleanup(func() { _ = eng.Stop(context.Background()) })
	r.eng, r.client = eng, eng.Client()
	return r
}

// waitEnd waits for the finisher pass that ends batch id, and returns
// what its callback reported ("" without one).
func (r *batchRig) waitEnd(t *testing.T, id uuid.UUID, callback bool) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case out := <-r.spy.calls:
			for _, b := range out {
				if b.ID != id {
					continue
				}
				if !callback {
					return ""
				}
				select {
				case s := <-r.ended:
					return s
				case <-deadline:
					t.Fatalf("batch %s ended %s; its callback did not run", id, b.Outcome)
				}
			}
		case <-deadline:
			t.Fatalf("batch %s did not end", id)
		}
	}
}

func items(n int, task *ratchet.Task[int, ratchet.Void]) []ratchet.Call {
	out := make([]ratchet.Call, n)
	for i := range out {
		out[i] = task.With(i)
	}
	return out
}

// A batch ends once every child finished: SUCCEEDED calls OnSuccess, once,
// whose body reads the batch's counts; a failed child makes it FAILED and
// calls OnFailure instead.
func TestBatchCallsBackOnce(t *testing.T) {
	r := startBatches(t)
	ctx := context.Background()
	ok, failed := r.done.With("ok"), r.failed.With("ko")
	id, err := r.client.SubmitBatch(ctx, ratchet.BatchSpec{Name: "twenty", OnSuccess: &ok, OnFailure: &failed}, items(20, r.item))
	require.NoError(t, err)
	assert.Equal(t, "batch.done ok: twenty SUCCEEDED map[SUCCEEDED:20]", r.waitEnd(t, id, true))
	st, err := r.client.Batch(ctx, id)
	require.NoError(t, err)
	assert.True(t, st.Done())
	assert.Equal(t, int64(20), st.Persisted)
	assert.True(t, st.Sealed)
	cb := st.CallbackID
	require.NotEqual(t, uuid.Nil, cb)
	j, err := r.client.GetJob(ctx, cb)
	require.NoError(t, err)
	assert.Equal(t, "batch.done", j.TaskName)
	assert.Equal(t, id.String(), j.Params[spi.BatchParam])

	r.mu.Lock()
	r.fail[3] = true
	r.mu.Unlock()
	id, err = r.client.SubmitBatch(ctx, ratchet.BatchSpec{Name: "five", OnSuccess: &ok, OnFailure: &failed}, items(5, r.item))
	require.NoError(t, err)
	assert.Equal(t, "batch.failed ko: five FAILED map[FAILED:1 SUCCEEDED:4]", r.waitEnd(t, id, true))
	select {
	case s := <-r.ended:
		t.Fatalf("a second callback ran: %s", s)
	default:
	}
}

// A batch's children pass the payload pipeline and the task check one by
// one: an oversize child, an unknown task or a bad option writes nothing.
func TestSubmitBatchRejectsBadInput(t *testing.T) {
	store := memory.New()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{MaxPayloadBytes: 64, Tasks: []string{"item", "big"}})
	require.NoError(t, err)
	ctx := context.Background()
	big := ratchet.NewVoidTask("big", func(context.Context, string) error { return nil })
	item := ratchet.NewVoidTask("item", func(context.Context, int) error { return nil })
	other := ratchet.NewVoidTask("other", func(context.Context, int) error { return nil })
	for name, calls := range map[string][]ratchet.Call{
		"an oversize child":  {item.With(1), big.With(strings.Repeat("x", 100))},
		"an unknown task":    {item.With(1), other.With(2)},
		"an idempotency key": {item.With(1, ratchet.WithIdempotencyKey("k"))},
		"a child that waits": {item.With(1, ratchet.AwaitSignal("go", 0))},
	} {
		_, err := client.SubmitBatch(ctx, ratchet.BatchSpec{}, calls)
		assert.Error(t, err, name)
		page, err := client.ListJobs(ctx, ratchet.ListOptions{})
		require.NoError(t, err)
		assert.Empty(t, page.Jobs, "%s: nothing written", name)
	}
	var pte *ratchet.PayloadTooLargeError
	_, err = client.SubmitBatch(ctx, ratchet.BatchSpec{}, []ratchet.Call{big.With(strings.Repeat("x", 100))})
	require.ErrorAs(t, err, &pte)
	assert.Equal(t, string(ratchet.SurfaceBatchChild), pte.Surface)
	_, err = client.SubmitBatch(ctx, ratchet.BatchSpec{Name: strings.Repeat("n", 256)}, nil)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

// countTo yields item(i) for i in [from, n), and an error at item failAt
// (when it is in range).
func countTo(task *ratchet.Task[int, ratchet.Void], from, n, failAt int) iter.Seq2[ratchet.Call, error] {
	return func(yield func(ratchet.Call, error) bool) {
		for i := from; i < n; i++ {
			if i == failAt {
				yield(ratchet.Call{}, errors.New("source went away"))
				return
			}
			if !yield(task.With(i), nil) {
				return
			}
		}
	}
}

// A streaming batch is written in chunks; a failed chunk is reported and
// leaves the batch open with what was persisted; ResumeBatch says where
// to restart, and the stream continued there writes every item once.
func TestStreamBatchResumes(t *testing.T) {
	r := startBatches(t)
	ctx := context.Background()
	var failures []ratchet.BatchChunkFailure
	spec := ratchet.BatchSpec{Name: "stream", ChunkSize: 4, OnChunkFailure: func(f ratchet.BatchChunkFailure) { failures = append(failures, f) }}

	// The source fails at item 10: chunks [0,4) and [4,8) are written.
	id, n, err := r.client.StreamBatch(ctx, spec, countTo(r.item, 0, 30, 10))
	require.ErrorContains(t, err, "source went away")
	assert.Equal(t, int64(8), n)
	assert.Empty(t, failures, "an item's error is not a chunk failure")
	at, err := r.client.ResumeBatch(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, int64(8), at)

	// The store loses the next chunk's write.
	r.spy.mu.Lock()
	r.spy.failChunks = 1
	r.spy.mu.Unlock()
	spec.ID = id
	_, n, err = r.client.StreamBatch(ctx, spec, countTo(r.item, int(at), 30, -1))
	require.ErrorIs(t, err, errChunkLost)
	assert.Equal(t, int64(8), n)
	require.Len(t, failures, 1)
	assert.Equal(t, ratchet.BatchChunkFailure{BatchID: id, Offset: 8, Size: 4, Err: failures[0].Err}, failures[0])
	assert.ErrorIs(t, failures[0].Err, errChunkLost)

	// A second submitter at a stale offset is refused: no duplicate.
	at, err = r.client.ResumeBatch(ctx, id)
	require.NoError(t, err)
	_, _, err = r.client.StreamBatch(ctx, spec, countTo(r.item, int(at), 30, -1))
	require.NoError(t, err)
	_, err = r.client.ResumeBatch(ctx, id)
	assert.ErrorIs(t, err, ratchet.ErrInvalidState, "a sealed batch takes no more items")

	r.waitEnd(t, id, false)
	st, err := r.client.Batch(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, int64(30), st.Persisted)
	assert.Equal(t, map[ratchet.Status]int{ratchet.StatusSucceeded: 30}, st.Counts)
	seen := map[int]int{}
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{WorkflowID: id, Limit: 100})
	require.NoError(t, err)
	for _, j := range page.Jobs {
		var k int
		require.NoError(t, r.client.Serializer().Unmarshal(j.Payload, &k))
		seen[k]++
	}
	for k := range 30 {
		assert.Equal(t, 1, seen[k], "item %d written once", k)
	}
	assert.Len(t, seen, 30)
}

// Two streams racing on one batch: the chunk offsets let one write each
// chunk, so no item is written twice.
func TestStreamBatchOffsetFencesASecondSubmitter(t *testing.T) {
	store := memory.New()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	item := ratchet.NewVoidTask("item", func(context.Context, int) error { return nil })
	id, _, err := client.StreamBatch(ctx, ratchet.BatchSpec{ChunkSize: 2}, countTo(item, 0, 10, 4))
	require.Error(t, err)
	spec := ratchet.BatchSpec{ID: id, ChunkSize: 2}
	// The first submitter learns offset 4 and is overtaken by a second
	// that writes items 4 and 5 before it.
	late := func(yield func(ratchet.Call, error) bool) {
		// The second submitter's chunk lands first.
		_, err := store.AddBatchChunk(ctx, spi.BatchChunk{BatchID: id, Offset: 4, Children: []*spi.Job{
			{ID: client.NewJobID(), TaskName: "item", Payload: []byte("4"), Status: spi.StatusPending, Priority: spi.PriorityNormal, WorkflowID: id},
		}})
		require.NoError(t, err)
		yield(item.With(4), nil)
		yield(item.With(5), nil)
	}
	_, _, err = client.StreamBatch(ctx, spec, late)
	assert.ErrorIs(t, err, ratchet.ErrBatchOffset)
	bs, err := client.Batch(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, int64(5), bs.Persisted, "the overtaken chunk wrote nothing")
}

// CancelBatch ends an open batch CANCELLED, cancels its children and stops
// a stream writing it; no callback runs.
func TestCancelBatch(t *testing.T) {
	r := startBatches(t)
	ctx := context.Background()
	ok := r.done.With("ok")
	id, _, err := r.client.StreamBatch(ctx, ratchet.BatchSpec{Name: "c", OnSuccess: &ok, ChunkSize: 2}, countTo(r.item, 0, 6, 4))
	require.Error(t, err)
	n, err := r.client.CancelBatch(ctx, id)
	require.NoError(t, err)
	assert.LessOrEqual(t, n, 4)
	st, err := r.client.Batch(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, ratchet.BatchCancelled, st.Outcome)
	assert.Zero(t, st.Counts[ratchet.StatusPending])
	_, _, err = r.client.StreamBatch(ctx, ratchet.BatchSpec{ID: id}, countTo(r.item, 4, 6, -1))
	assert.ErrorIs(t, err, ratchet.ErrInvalidState, "a cancelled batch takes no more items")
	_, err = r.client.CancelBatch(ctx, uuid.New())
	assert.ErrorIs(t, err, ratchet.ErrNotFound)
}

// ChannelCalls streams a channel's calls; a producer's error stops the
// stream with the batch open, and the stream resumes from a new channel.
func TestStreamBatchFromChannel(t *testing.T) {
	r := startBatches(t)
	ctx := context.Background()
	produce := func(from, to int, fail error) (<-chan ratchet.Call, func() error) {
		ch := make(chan ratchet.Call)
		go func() {
			defer close(ch)
			for i := from; i < to; i++ {
				ch <- r.item.With(i)
			}
		}()
		return ch, func() error { return fail }
	}
	errGone := errors.New("producer gone")
	ch, failed := produce(0, 7, errGone)
	id, n, err := r.client.StreamBatch(ctx, ratchet.BatchSpec{ChunkSize: 3}, ratchet.ChannelCalls(ch, failed))
	require.ErrorIs(t, err, errGone)
	assert.Equal(t, int64(6), n, "two chunks written; the seventh item's chunk was not")
	at, err := r.client.ResumeBatch(ctx, id)
	require.NoError(t, err, "the batch is open")
	require.Equal(t, int64(6), at)

	ch, failed = produce(int(at), 10, nil)
	_, n, err = r.client.StreamBatch(ctx, ratchet.BatchSpec{ID: id, ChunkSize: 3}, ratchet.ChannelCalls(ch, failed))
	require.NoError(t, err)
	assert.Equal(t, int64(10), n)
	r.waitEnd(t, id, false)
	st, err := r.client.Batch(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, map[ratchet.Status]int{ratchet.StatusSucceeded: 10}, st.Counts)
}
