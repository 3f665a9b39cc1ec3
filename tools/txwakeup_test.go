package tools_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// idlePoll makes polling too slow to explain a job that starts within
// 100 ms: only a wakeup can.
const idlePoll = 10 * time.Second

// quiet waits until the engine has claimed at least once and then not
// again for 200 ms: its poller is idle, until a wakeup or idlePoll. Nothing
// signals idleness, hence the quiet period.
func waitIdle(t *testing.T, s *observedStore) {
	t.Helper()
	select {
	case <-s.claimed:
	case <-time.After(idlePoll):
		t.Fatal("the engine made no claim")
	}
	for {
		select {
		case <-s.claimed:
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}

type txRig struct {
	store   *observedStore
	eng     *engine.Engine
	started chan time.Time
	job     *ratchet.Task[int, struct{}]
	events  <-chan engine.Event
}

func newTxRig(t *testing.T, s *observedStore) *txRig {
	t.Helper()
	r := &txRig{store: s, started: make(chan time.Time, 10)}
	r.job = ratchet.NewVoidTask("tx.job", func(ctx context.Context, _ int) error {
		r.started <- time.Now()
		return nil
	})
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, NodeID: "tx-node", MinPollInterval: idlePoll, PollInterval: idlePoll}, r.job)
	require.NoError(t, err)
	r.eng = eng
	events, unsub := eng.Subscribe(100)
	r.events = events
	require.NoError(t, eng.Start(t.Context()))
	t.Cleanup(func() {
		_ = eng.Stop(context.Background())
		unsub()
		_ = s.Close()
	})
	return r
}

// startedAfter waits for the job's body to start and returns how long after
// since it did.
func (r *txRig) startedAfter(t *testing.T, since time.Time) time.Duration {
	t.Helper()
	select {
	case at := <-r.started:
		return at.Sub(since)
	case <-time.After(2 * idlePoll):
		t.Fatal("the job did not start")
		return 0
	}
}

// A job submitted in a transaction through eng.Client() starts within
// 100 ms of the commit on SQLite, when the application says "committed"
// through an AfterCommit (database/sql has no commit hook), and nothing
// wakes after a rollback.
func TestTxSubmitWakesAfterCommitSQLite(t *testing.T) {
	ctx := context.Background()
	inner, err := sqlite.Open(ctx, t.TempDir()+"/ratchet.db", sqlite.Options{Create: true})
	require.NoError(t, err)
	r := newTxRig(t, &observedStore{Store: inner, claimed: make(chan int, 1000)})
	waitIdle(t, r.store)

	// A rollback: the registrar's actions are dropped, no job exists.
	tx, err := inner.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	var rolledBack ratchet.AfterCommit
	gone, err := r.job.Submit(ctx, r.eng.Client(), 1, ratchet.InTx(tx), ratchet.WithAfterCommit(&rolledBack))
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	rolledBack.Discard()
	_, err = r.eng.Client().GetJob(ctx, gone)
	assert.ErrorIs(t, err, ratchet.ErrNotFound)

	tx, err = inner.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	var after ratchet.AfterCommit
	id, err := r.job.Submit(ctx, r.eng.Client(), 2, ratchet.InTx(tx), ratchet.WithAfterCommit(&after))
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	committed := time.Now()
	after.Committed()
	d := r.startedAfter(t, committed)
	t.Logf("SQLite: started %s after the commit", d)
	assert.Less(t, d, 100*time.Millisecond)
	ev := <-r.events
	assert.Equal(t, id, ev.JobID)
	assert.Equal(t, engine.EventSucceeded, ev.Kind)
}

// On PostgreSQL the commit's NOTIFY wakes every node, the submitting one
// too: no registrar needed.
func TestTxSubmitWakesOnCommitPostgres(t *testing.T) {
	ctx := context.Background()
	dsn, schema := dbtest.Postgres(t)
	inner, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	hints := make(chan spi.WakeupHint, 100)
	r := newTxRig(t, &observedStore{Store: inner, claimed: make(chan int, 1000), hints: hints})

	// Warm up until the engine's LISTEN connection is live: submit through
	// a client of no node until its wakeup reaches the engine.
	plain, err := ratchet.NewClient(inner, ratchet.ClientOptions{})
	require.NoError(t, err)
	warm := 0
	for live := false; !live; {
		_, err := r.job.Submit(ctx, plain, 0)
		require.NoError(t, err)
		warm++
		select {
		case <-hints:
			live = true
		case <-time.After(100 * time.Millisecond):
			require.Less(t, warm, 100, "no wakeup reached the engine's listener")
		}
	}
	for range warm {
		r.startedAfter(t, time.Now())
		<-r.events
	}
	waitIdle(t, r.store)

	tx, err := inner.Pool().Begin(ctx)
	require.NoError(t, err)
	id, err := r.job.Submit(ctx, r.eng.Client(), 1, ratchet.InTx(tx))
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	committed := time.Now()
	d := r.startedAfter(t, committed)
	t.Logf("PostgreSQL: started %s after the commit", d)
	assert.Less(t, d, 100*time.Millisecond)
	ev := <-r.events
	assert.Equal(t, id, ev.JobID)
	assert.Equal(t, engine.EventSucceeded, ev.Kind)
}
