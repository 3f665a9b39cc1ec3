package tools_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// seqStep is one job of the sequence tests: the n-th of its key.
type seqStep struct {
	Key string `json:"key"`
	N   int    `json:"n"`
}

// seqLog records, per key, the order the jobs started in, and the
// starts that found another job of their key running.
type seqLog struct {
	mu       sync.Mutex
	running  map[string]int
	started  map[string][]int
	overlaps []string
}

func (l *seqLog) enter(s seqStep) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[s.Key]++; l.running[s.Key] > 1 {
		l.overlaps = append(l.overlaps, fmt.Sprintf("%s #%d started while another job of its key ran", s.Key, s.N))
	}
	l.started[s.Key] = append(l.started[s.Key], s.N)
}

func (l *seqLog) leave(s seqStep) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running[s.Key]--
}

// runSequences submits keys × perKey jobs in sequences from the handles
// (each key's jobs one after the other, from handle after handle, half of
// them inside transactions) while a node on each handle works them, and
// checks that every job of a key ran alone and in submission order.
func runSequences(t *testing.T, stores []spi.Store, inTx []func(ctx context.Context, fn func(tx any) error) error, keys, perKey int) {
	ctx := t.Context()
	log := &seqLog{running: map[string]int{}, started: map[string][]int{}}
	task := ratchet.NewVoidTask("seq.step", func(_ context.Context, s seqStep) error {
		log.enter(s)
		defer log.leave(s)
		return nil
	})
	clients := make([]*ratchet.Client, len(stores))
	for i, s := range stores {
		eng, err := engine.New(s, engine.Options{NodeID: fmt.Sprint("node-", i), Concurrency: 8, Client: ratchet.ClientOptions{Logger: quiet}}, task)
		require.NoError(t, err)
		require.NoError(t, eng.Start(ctx))
		t.Cleanup(func() { _ = eng.Stop(context.WithoutCancel(ctx)) })
		clients[i] = eng.Client()
	}
	ids := make([][]uuid.UUID, keys)
	errs := make([]error, keys)
	var wg sync.WaitGroup
	for k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint("acct-", k)
			for n := range perKey {
				h := (k + n) % len(stores)
				id, err := submitHalfInTx(ctx, inTx[h], k+n, func(opts ...ratchet.SubmitOption) (uuid.UUID, error) {
					return task.Submit(ctx, clients[h], seqStep{key, n}, append(opts, ratchet.WithSequenceKey(key))...)
				})
				if err != nil {
					errs[k] = err
					return
				}
				ids[k] = append(ids[k], id)
			}
		}()
	}
	wg.Wait()
	for k := range keys {
		require.NoError(t, errs[k], "key %d", k)
		for _, id := range ids[k] {
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			j, err := clients[0].WaitJob(wctx, id)
			cancel()
			require.NoError(t, err, "key %d: job %s did not finish", k, id)
			require.Equal(t, ratchet.StatusSucceeded, j.Status)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	assert.Empty(t, log.overlaps, "no job started while another of its key ran")
	want := make([]int, perKey)
	for n := range want {
		want[n] = n
	}
	for k := range keys {
		assert.Equal(t, want, log.started[fmt.Sprint("acct-", k)], "key %d: the jobs started in submission order", k)
	}
}

// Sequences submitted from three store handles (three processes, as the
// database sees them) while a node on each works them: on each SQL store
// that runs here, no job of a key starts before the one before it has
// finished, and none is left waiting.
func TestSequencesUnderLoad(t *testing.T) {
	const keys, perKey = 40, 8
	t.Run("postgres", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		var stores []spi.Store
		var txs []func(ctx context.Context, fn func(tx any) error) error
		for range 3 {
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores, txs = append(stores, s), append(txs, pgTx(s))
		}
		runSequences(t, stores, txs, keys, perKey)
	})
	t.Run("mysql", func(t *testing.T) {
		dsn, db := dbtest.MySQL(t)
		var stores []spi.Store
		var txs []func(ctx context.Context, fn func(tx any) error) error
		for range 3 {
			s, err := mysql.Open(t.Context(), dsn, mysql.Options{Database: db, ApplyMigrations: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores, txs = append(stores, s), append(txs, sqlTx(s.DB()))
		}
		runSequences(t, stores, txs, keys, perKey)
	})
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sequence.db")
		var stores []spi.Store
		var txs []func(ctx context.Context, fn func(tx any) error) error
		for range 3 {
			s, err := sqlite.Open(t.Context(), path, sqlite.Options{Create: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores, txs = append(stores, s), append(txs, sqlTx(s.DB()))
		}
		runSequences(t, stores, txs, keys, perKey)
	})
}
