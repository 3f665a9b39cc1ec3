package ratchet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// bulkStore is the least of a store that Bulk and MatchingJobs use: jobs
// in a map, listed in id order with the status and task filters, retried,
// cancelled and deleted. Other Store methods are not called (they panic,
// through the nil embedded interface).
type bulkStore struct {
	spi.Store

	mu   sync.Mutex
	jobs map[uuid.UUID]*spi.Job
	// onList, when set, runs at the start of each ListJobs call (outside
	// the lock): a test submits a job while a snapshot is being read.
	onList func()
	// failOn makes RetryFailedJob of that id fail with a store error.
	failOn uuid.UUID
	// deleteCalls records the size of each DeleteJobs call; inFlight and
	// maxInFlight the calls that overlapped.
	deleteCalls           []int
	inFlight, maxInFlight atomic.Int32
}

func newBulkStore() *bulkStore { return &bulkStore{jobs: map[uuid.UUID]*spi.Job{}} }

func (s *bulkStore) add(c *ratchet.Client, task string, status spi.Status) uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.NewJobID()
	s.jobs[id] = &spi.Job{ID: id, TaskName: task, Status: status}
	return id
}

func (s *bulkStore) status(id uuid.UUID) spi.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[id]; ok {
		return j.Status
	}
	return ""
}

func (s *bulkStore) GetJob(_ context.Context, id uuid.UUID) (*spi.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	return j.Clone(), nil
}

func (s *bulkStore) ListJobs(_ context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	if s.onList != nil {
		s.onList()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []uuid.UUID
	for id, j := range s.jobs {
		if bytes.Compare(id[:], p.After[:]) > 0 && p.Matches(j) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	var next uuid.UUID
	if len(ids) > p.Limit {
		ids = ids[:p.Limit]
		next = ids[len(ids)-1]
	}
	out := make([]*spi.Job, len(ids))
	for i, id := range ids {
		out[i] = s.jobs[id].Clone()
	}
	return out, next, nil
}

func (s *bulkStore) RetryFailedJob(_ context.Context, id uuid.UUID, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == s.failOn {
		return errors.New("connection reset")
	}
	j, ok := s.jobs[id]
	switch {
	case !ok:
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	case j.Status != spi.StatusFailed:
		return fmt.Errorf("%w: %s is %s", spi.ErrInvalidState, id, j.Status)
	}
	j.Status = spi.StatusPending
	return nil
}

func (s *bulkStore) CancelJob(_ context.Context, id uuid.UUID, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	switch {
	case !ok:
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	case j.Status != spi.StatusPending:
		return fmt.Errorf("%w: %s is %s", spi.ErrInvalidState, id, j.Status)
	}
	j.Status = spi.StatusCancelled
	return nil
}

// DeleteJobs implements spi.JobDeleter.
func (s *bulkStore) DeleteJobs(_ context.Context, ids []uuid.UUID) ([]bool, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxInFlight.Load()
		if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteCalls = append(s.deleteCalls, len(ids))
	out := make([]bool, len(ids))
	for i, id := range ids {
		if j, ok := s.jobs[id]; ok && j.Status.Terminal() {
			delete(s.jobs, id)
			out[i] = true
		}
	}
	return out, nil
}

func newBulkClient(t *testing.T) (*ratchet.Client, *bulkStore) {
	t.Helper()
	st := newBulkStore()
	c, err := ratchet.NewClient(st, ratchet.ClientOptions{})
	require.NoError(t, err)
	return c, st
}

func TestBulkMatchingJobsIsASnapshot(t *testing.T) {
	ctx := context.Background()
	c, st := newBulkClient(t)
	var want []uuid.UUID
	for i := range 25_000 {
		task := "a"
		if i%5 == 0 {
			task = "b"
		}
		id := st.add(c, task, spi.StatusFailed)
		if task == "a" {
			want = append(want, id)
		}
	}
	// A job submitted while the snapshot is read is left out: its id is
	// above the bound minted at the start.
	var late []uuid.UUID
	st.onList = func() { late = append(late, st.add(c, "a", spi.StatusFailed)) }
	ids, err := c.MatchingJobs(ctx, ratchet.ListOptions{Task: "a", Status: spi.StatusFailed, Limit: 3, After: want[10]})
	require.NoError(t, err)
	assert.Len(t, late, 3, "20,000 matches (and the late ones) read 10,000 a page: Limit and After are ignored")
	assert.Equal(t, want, ids)

	st.onList = nil
	none, err := c.MatchingJobs(ctx, ratchet.ListOptions{Task: "nobody"})
	require.NoError(t, err)
	assert.Empty(t, none, "a filter that matches nothing gives zero ids, not an error")

	// An earlier bound leaves out what came after it; a bound in the
	// future is taken as now.
	bounded, err := c.MatchingJobsBefore(ctx, ratchet.ListOptions{Task: "a"}, want[99])
	require.NoError(t, err)
	assert.Equal(t, want[:100], bounded)
	all, err := c.MatchingJobsBefore(ctx, ratchet.ListOptions{Task: "a"}, uuid.Max)
	require.NoError(t, err)
	assert.Equal(t, append(slices.Clone(want), late...), all)
}

func TestBulkRetryCountsChangedAndSkipped(t *testing.T) {
	ctx := context.Background()
	c, st := newBulkClient(t)
	var failed []uuid.UUID
	for range 40 {
		failed = append(failed, st.add(c, "a", spi.StatusFailed))
	}
	ids, err := c.MatchingJobs(ctx, ratchet.ListOptions{Status: spi.StatusFailed})
	require.NoError(t, err)
	require.Len(t, ids, 40)
	// Someone else retries three of them after the snapshot, and one is
	// deleted: all four are skipped, not errors.
	for _, id := range failed[:3] {
		require.NoError(t, c.RetryJob(ctx, id))
	}
	st.mu.Lock()
	delete(st.jobs, failed[3])
	st.mu.Unlock()
	var progressed int
	res, err := c.Bulk(ctx, ratchet.BulkRetry, ids, ratchet.BulkOptions{Workers: 3, Progress: func(n int) { progressed += n }})
	require.NoError(t, err)
	assert.Equal(t, 36, res.Changed)
	assert.Equal(t, 4, res.Skipped)
	assert.ElementsMatch(t, failed[:4], res.SkippedIDs, "the skipped jobs, named")
	assert.Equal(t, 40, progressed, "Progress hears of every id, serially (the race detector checks)")
	for _, id := range failed[4:] {
		assert.Equal(t, spi.StatusPending, st.status(id))
	}

	res, err = c.Bulk(ctx, ratchet.BulkRetry, nil, ratchet.BulkOptions{})
	require.NoError(t, err)
	assert.Zero(t, res, "no ids: nothing to do")
}

func TestBulkStopsAtAStoreError(t *testing.T) {
	ctx := context.Background()
	c, st := newBulkClient(t)
	var ids []uuid.UUID
	for range 10 {
		ids = append(ids, st.add(c, "a", spi.StatusFailed))
	}
	st.failOn = ids[4]
	res, err := c.Bulk(ctx, ratchet.BulkRetry, ids, ratchet.BulkOptions{Workers: 1})
	require.ErrorContains(t, err, "connection reset")
	assert.ErrorContains(t, err, ids[4].String(), "the error names the job")
	assert.Equal(t, ratchet.BulkResult{Changed: 4}, res, "one worker: the jobs before it were changed, none after")
	assert.Equal(t, spi.StatusFailed, st.status(ids[5]))

	_, err = c.Bulk(ctx, ratchet.BulkRetry, ids, ratchet.BulkOptions{Workers: -1})
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = c.Bulk(ctx, ratchet.BulkAction(0), ids, ratchet.BulkOptions{})
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

func TestBulkCancelAndDelete(t *testing.T) {
	ctx := context.Background()
	c, st := newBulkClient(t)
	var pending []uuid.UUID
	for range 5 {
		pending = append(pending, st.add(c, "a", spi.StatusPending))
	}
	running := st.add(c, "a", spi.StatusRunning)
	res, err := c.Bulk(ctx, ratchet.BulkCancel, append(slices.Clone(pending), running), ratchet.BulkOptions{})
	require.NoError(t, err)
	assert.Equal(t, ratchet.BulkResult{Changed: 5, Skipped: 1, SkippedIDs: []uuid.UUID{running}}, res, "a RUNNING job is not cancelled")
	assert.Equal(t, spi.StatusCancelled, st.status(pending[0]))
	assert.Equal(t, spi.StatusRunning, st.status(running))

	for range 1200 {
		st.add(c, "old", spi.StatusSucceeded)
	}
	ids, err := c.MatchingJobs(ctx, ratchet.ListOptions{Task: "old"})
	require.NoError(t, err)
	ids = append(ids, running) // not finished: skipped
	res, err = c.Bulk(ctx, ratchet.BulkDelete, ids, ratchet.BulkOptions{Workers: 2})
	require.NoError(t, err)
	assert.Equal(t, ratchet.BulkResult{Changed: 1200, Skipped: 1, SkippedIDs: []uuid.UUID{running}}, res)
	calls := slices.Clone(st.deleteCalls)
	slices.Sort(calls)
	assert.Equal(t, []int{201, 500, 500}, calls, "deletes go 500 ids a call")
	assert.LessOrEqual(t, st.maxInFlight.Load(), int32(2), "at most Workers calls at once")
	left, err := c.MatchingJobs(ctx, ratchet.ListOptions{Task: "old"})
	require.NoError(t, err)
	assert.Empty(t, left)
}

// batchedStore is a bulkStore with spi.BulkManager: it records the size
// of each batch call.
type batchedStore struct {
	*bulkStore
	calls []int
}

func (s *batchedStore) batch(ids []uuid.UUID, fn func(uuid.UUID) error) ([]bool, error) {
	if len(ids) > spi.MaxBulkIDs {
		return nil, fmt.Errorf("%d ids", len(ids))
	}
	s.mu.Lock()
	s.calls = append(s.calls, len(ids))
	s.mu.Unlock()
	out := make([]bool, len(ids))
	for i, id := range ids {
		switch err := fn(id); {
		case err == nil:
			out[i] = true
		case errors.Is(err, spi.ErrInvalidState), errors.Is(err, spi.ErrNotFound):
		default:
			return nil, err
		}
	}
	return out, nil
}

// RetryFailedJobs implements spi.BulkManager.
func (s *batchedStore) RetryFailedJobs(ctx context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	return s.batch(ids, func(id uuid.UUID) error { return s.RetryFailedJob(ctx, id, now) })
}

// CancelJobs implements spi.BulkManager.
func (s *batchedStore) CancelJobs(ctx context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	return s.batch(ids, func(id uuid.UUID) error { return s.CancelJob(ctx, id, now) })
}

// countingNotifier counts the wakeups.
type countingNotifier struct{ n atomic.Int32 }

func (c *countingNotifier) NotifyNewWork(ratchet.Priority) { c.n.Add(1) }

func TestBulkRetryAndCancelInBatches(t *testing.T) {
	ctx := context.Background()
	st := &batchedStore{bulkStore: newBulkStore()}
	wake := &countingNotifier{}
	c, err := ratchet.NewClient(st, ratchet.ClientOptions{Notifier: wake})
	require.NoError(t, err)
	var failed []uuid.UUID
	for range 1100 {
		failed = append(failed, st.add(c, "a", spi.StatusFailed))
	}
	running := st.add(c, "a", spi.StatusRunning)
	ids := append(slices.Clone(failed), running, uuid.New())
	var progressed int
	res, err := c.Bulk(ctx, ratchet.BulkRetry, ids, ratchet.BulkOptions{Workers: 2, Progress: func(n int) { progressed += n }})
	require.NoError(t, err)
	assert.Equal(t, 1100, res.Changed)
	assert.ElementsMatch(t, ids[1100:], res.SkippedIDs, "a RUNNING job and an unknown id are skipped")
	assert.Equal(t, 1102, progressed)
	calls := slices.Clone(st.calls)
	slices.Sort(calls)
	assert.Equal(t, []int{102, 500, 500}, calls, "retries go bulkBatch ids a call")
	assert.Equal(t, int32(3), wake.n.Load(), "one wakeup per batch that changed a job")
	for _, id := range failed {
		assert.Equal(t, spi.StatusPending, st.status(id))
	}

	// Again: nothing is FAILED any more, nothing changes, nobody is woken.
	res, err = c.Bulk(ctx, ratchet.BulkRetry, failed, ratchet.BulkOptions{})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1100}, []int{res.Changed, res.Skipped})
	assert.ElementsMatch(t, failed, res.SkippedIDs)
	assert.Equal(t, int32(3), wake.n.Load())

	st.calls = nil
	res, err = c.Bulk(ctx, ratchet.BulkCancel, append(slices.Clone(failed[:700]), running), ratchet.BulkOptions{})
	require.NoError(t, err)
	assert.Equal(t, ratchet.BulkResult{Changed: 700, Skipped: 1, SkippedIDs: []uuid.UUID{running}}, res)
	calls = slices.Clone(st.calls)
	slices.Sort(calls)
	assert.Equal(t, []int{201, 500}, calls, "cancels go bulkBatch ids a call")
	assert.Equal(t, spi.StatusCancelled, st.status(failed[0]))
	assert.Equal(t, spi.StatusPending, st.status(failed[700]))
	assert.Equal(t, spi.StatusRunning, st.status(running))

	// A store error stops the batches and is returned.
	st.failOn = failed[800]
	for _, id := range failed[700:] {
		st.mu.Lock()
		st.jobs[id].Status = spi.StatusFailed
		st.mu.Unlock()
	}
	_, err = c.Bulk(ctx, ratchet.BulkRetry, failed[700:], ratchet.BulkOptions{Workers: 1})
	require.ErrorContains(t, err, "connection reset")
}

func TestBulkActionNames(t *testing.T) {
	assert.Equal(t, "retry", ratchet.BulkRetry.String())
	assert.Equal(t, "cancel", ratchet.BulkCancel.String())
	assert.Equal(t, "delete", ratchet.BulkDelete.String())
	assert.Equal(t, "BulkAction(9)", ratchet.BulkAction(9).String())
}

// Retry every job of the dead-letter queue of one task: take the snapshot
// of the ids the filter matches now, then act on them, eight store calls at
// once. Jobs that moved on since the snapshot are skipped.
func ExampleClient_Bulk() {
	ctx := context.Background()
	store := newBulkStore() // any spi.Store: memory, SQLite, PostgreSQL, ...
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		panic(err)
	}
	for range 3 {
		store.add(client, "email.send", spi.StatusFailed)
	}
	store.add(client, "report.build", spi.StatusFailed)

	ids, err := client.MatchingJobs(ctx, ratchet.ListOptions{Status: ratchet.StatusFailed, Task: "email.send"})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(ids), "jobs match")
	res, err := client.Bulk(ctx, ratchet.BulkRetry, ids, ratchet.BulkOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d retried, %d skipped\n", res.Changed, res.Skipped)
	// Output:
	// 3 jobs match
	// 3 retried, 0 skipped
}
