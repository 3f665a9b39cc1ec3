package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func permit(prio spi.Priority, due time.Time, resource string, limit int) *spi.Job {
	j := job(prio, due)
	j.Resource = resource
	j.ResourceLimit = limit
	return j
}

// TestClusterRowsFollowTheirJob: deleting a job (archiving, later) deletes
// its state and properties.
func TestClusterRowsFollowTheirJob(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	require.NoError(t, s.PutProperty(ctx, j.ID, "k", "v"))
	_, err := s.InitStateUnfenced(ctx, j.ID, "ns", []byte(`{}`))
	require.NoError(t, err)
	exec(t, s, `DELETE FROM `+qualify(s.schema, "scheduler_job")+` WHERE job_id = $1`, j.ID)
	for _, table := range []string{"scheduler_job_state", "scheduler_job_property", "scheduler_job_tag"} {
		var n int
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+qualify(s.schema, table)).Scan(&n))
		assert.Zero(t, n, table)
	}
}

func TestCapabilitiesAfterClose(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Close())
	_, err := s.CheckClaims(ctx, nil)
	require.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.TryAcquireLease(ctx, "l", "o", time.Minute, t0)
	require.ErrorIs(t, err, spi.ErrClosed)
	require.ErrorIs(t, s.ReleaseLease(ctx, "l", "o"), spi.ErrClosed)
	_, _, err = s.GetState(ctx, uuid.New(), "ns")
	require.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.InitStateUnfenced(ctx, uuid.New(), "ns", nil)
	require.ErrorIs(t, err, spi.ErrClosed)
	require.ErrorIs(t, s.PutProperty(ctx, uuid.New(), "k", "v"), spi.ErrClosed)
	_, err = s.FindJobsByProperty(ctx, "k", "v", 1)
	require.ErrorIs(t, err, spi.ErrClosed)
}

// TestConcurrentPermitClaimsNeverOverAdmit: two stores (two pools, as two
// processes) claim from 100 jobs of one resource with limit 2 (and plain
// jobs mixed in) with four goroutines each; at no time do more than two of
// the resource's jobs run, and every job runs once.
func TestConcurrentPermitClaimsNeverOverAdmit(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s1 := openSchema(t, dsn, schema)
	s2 := openSchema(t, dsn, schema)
	var jobs []*spi.Job
	for i := range 100 {
		jobs = append(jobs, permit(spi.Priority(i%spi.NumPriorities), t0.Add(-time.Duration(i)*time.Second), "db", 2))
	}
	for i := range 40 {
		jobs = append(jobs, job(spi.Priority(i%spi.NumPriorities), t0.Add(-time.Duration(i)*time.Second)))
	}
	insert(t, s1, jobs...)

	var mu sync.Mutex
	holding := 0 // permit jobs claimed and not yet being completed
	maxHolding := 0
	seen := map[uuid.UUID]int{}
	errs := make(chan error, 64)
	stop := make(chan struct{})

	// A watcher reads the count of holders from the database meanwhile.
	var watch sync.WaitGroup
	var maxInDB atomic.Int64
	watch.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n int64
			err := s1.pool.QueryRow(ctx, `SELECT count(*) FROM `+qualify(schema, "scheduler_job")+
				` WHERE resource_name = 'db' AND status = 'RUNNING'`).Scan(&n)
			if err != nil {
				errs <- err
				return
			}
			if n > maxInDB.Load() {
				maxInDB.Store(n)
			}
		}
	})

	var wg sync.WaitGroup
	for w := range 8 {
		store := s1
		if w%2 == 1 {
			store = s2
		}
		node := fmt.Sprintf("node-%d", w)
		wg.Go(func() {
			idle := 0
			for idle < 20 {
				got, err := store.ClaimJobs(ctx, spi.ClaimParams{NodeID: node, Limit: 3, Now: t0, BoostInterval: time.Minute})
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					idle++
					time.Sleep(time.Millisecond)
					continue
				}
				idle = 0
				mu.Lock()
				for _, j := range got {
					seen[j.ID]++
					if j.Resource == "db" {
						holding++
					}
				}
				maxHolding = max(maxHolding, holding)
				mu.Unlock()
				time.Sleep(time.Millisecond) // run the jobs
				cs := make([]spi.Completion, len(got))
				mu.Lock()
				for i, j := range got {
					if j.Resource == "db" {
						holding-- // before the permit is given back
					}
					cs[i] = spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}
				}
				mu.Unlock()
				ok, err := store.CompleteJobs(ctx, cs)
				if err != nil {
					errs <- err
					return
				}
				for i, a := range ok {
					if !a {
						errs <- fmt.Errorf("completion of %s superseded", got[i].ID)
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.LessOrEqual(t, maxHolding, 2, "more than two permit holders at once")
	assert.Equal(t, 2, maxHolding, "the limit was reached")
	assert.LessOrEqual(t, maxInDB.Load(), int64(2), "more than two RUNNING holders in the database")
	assert.Len(t, seen, len(jobs))
	for id, n := range seen {
		assert.Equal(t, 1, n, "job %s claimed %d times", id, n)
	}
	all, _, err := s1.ListJobs(ctx, spi.ListParams{Limit: 1000})
	require.NoError(t, err)
	for _, j := range all {
		assert.Equal(t, spi.StatusSucceeded, j.Status)
	}
}

// TestWakeupsNameTheirSource: the wakeup of an insert carries the node of
// its spi.InsertOptions.Source, on every path (one statement, COPY, the
// application's transaction); a release's names none.
func TestWakeupsNameTheirSource(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	listener := openSchema(t, dsn, schema)
	writer := openSchema(t, dsn, schema)
	hints := make(chan spi.WakeupHint, 64)
	lctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go func() { _ = listener.ListenWakeups(lctx, func(h spi.WakeupHint) { hints <- h }) }()
	waitListening(t, listener)
	nextHint := func() spi.WakeupHint {
		t.Helper()
		select {
		case h := <-hints:
			return h
		case <-time.After(10 * time.Second):
			t.Fatal("no wakeup arrived")
			return spi.WakeupHint{}
		}
	}
	_, err := writer.InsertJobs(ctx, []*spi.Job{job(spi.PriorityHigh, t0)}, spi.InsertOptions{Source: "node-7|eu"})
	require.NoError(t, err)
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityHigh, Source: "node-7|eu"}, nextHint())

	_, err = writer.InsertJobs(ctx, []*spi.Job{job(spi.PriorityLow, t0)}, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityLow}, nextHint(), "no source")

	var many []*spi.Job
	for range CopyThreshold {
		many = append(many, job(spi.PriorityNormal, t0))
	}
	_, err = writer.InsertJobs(ctx, many, spi.InsertOptions{Source: "copier"})
	require.NoError(t, err)
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityNormal, Source: "copier"}, nextHint())

	tx, err := writer.Pool().Begin(ctx)
	require.NoError(t, err)
	_, err = writer.InsertJobsTx(ctx, tx, []*spi.Job{job(spi.PriorityCritical, t0)}, spi.InsertOptions{Source: "web-1"})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityCritical, Source: "web-1"}, nextHint())

	c := claim(t, writer, "n", 1, t0, 0)
	require.Len(t, c, 1)
	_, err = writer.ReleaseJobs(ctx, []spi.ClaimRef{ref(c[0])}, t0)
	require.NoError(t, err)
	assert.Equal(t, spi.WakeupHint{Priority: c[0].Priority}, nextHint(), "a release names no source")

	// A source that cannot travel in a notification is left out; the
	// insert still succeeds.
	_, err = writer.InsertJobs(ctx, []*spi.Job{job(spi.PriorityLowest, t0)}, spi.InsertOptions{Source: strings.Repeat("x", 9000)})
	require.NoError(t, err)
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityLowest}, nextHint())
}

// TestConcurrentPutProperty: writers racing on one key with different
// values: exactly one wins and the others fail with ErrPropertyExists;
// with the same value, all succeed.
func TestConcurrentPutProperty(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s1 := openSchema(t, dsn, schema)
	s2 := openSchema(t, dsn, schema)
	for round := range 10 {
		j := job(spi.PriorityNormal, t0)
		insert(t, s1, j)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for w := range errs {
			store := s1
			if w%2 == 1 {
				store = s2
			}
			value := fmt.Sprint(w)
			if round%2 == 1 {
				value = "same"
			}
			wg.Go(func() { errs[w] = store.PutProperty(ctx, j.ID, "k", value) })
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
				continue
			}
			require.ErrorIs(t, err, spi.ErrPropertyExists)
		}
		if round%2 == 1 {
			assert.Equal(t, len(errs), wins, "the same value")
		} else {
			assert.Equal(t, 1, wins, "different values")
		}
	}
}

// TestResourceRoundTripsThroughCopy: a COPY batch writes the resource
// columns when a job names a resource, and leaves them to their defaults
// otherwise.
func TestResourceRoundTripsThroughCopy(t *testing.T) {
	s := openStore(t)
	var with, without []*spi.Job
	for i := range CopyThreshold {
		with = append(with, job(spi.PriorityNormal, t0))
		without = append(without, job(spi.PriorityNormal, t0))
		if i == 7 {
			with[i].Resource, with[i].ResourceLimit = "gpu", 4
		}
	}
	insert(t, s, with...)
	insert(t, s, without...)
	assert.Equal(t, with[7], get(t, s, with[7].ID))
	assert.Equal(t, with[8], get(t, s, with[8].ID))
	assert.Equal(t, without[7], get(t, s, without[7].ID))
}
