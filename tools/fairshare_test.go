package tools_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

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

// runFairShare submits big jobs of one fairness key, then perKey jobs of
// each of keys small keys, from the handles in turn, and only then starts
// a node of two slots on each handle. It returns how many jobs of the big
// key were claimed before the last small-key job was, and checks that
// every job ran and each small key's jobs were claimed in submission
// order.
func runFairShare(t *testing.T, stores []spi.Store, big, keys, perKey int) int {
	ctx := t.Context()
	var mu sync.Mutex
	var starts []seqStep
	task := ratchet.NewVoidTask("fair.step", func(_ context.Context, s seqStep) error {
		mu.Lock()
		defer mu.Unlock()
		starts = append(starts, s)
		return nil
	})
	engines := make([]*engine.Engine, len(stores))
	for i, s := range stores {
		eng, err := engine.New(s, engine.Options{NodeID: fmt.Sprint("node-", i), Concurrency: 2, Client: ratchet.ClientOptions{Logger: quiet}}, task)
		require.NoError(t, err)
		engines[i] = eng
	}
	client := engines[0].Client()
	args := make([]seqStep, big)
	for n := range args {
		args[n] = seqStep{"big", n}
	}
	ids, err := task.SubmitMany(ctx, client, args, ratchet.WithFairnessKey("big"))
	require.NoError(t, err)
	for k := range keys {
		key := fmt.Sprint("tenant-", k)
		for n := range perKey {
			id, err := task.Submit(ctx, engines[(k+n)%len(engines)].Client(), seqStep{key, n}, ratchet.WithFairnessKey(key))
			require.NoError(t, err)
			ids = append(ids, id)
		}
	}
	for _, eng := range engines {
		require.NoError(t, eng.Start(ctx))
		t.Cleanup(func() { _ = eng.Stop(context.WithoutCancel(ctx)) })
	}
	claimed := make([]time.Time, len(ids))
	for i, id := range ids {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		j, err := client.WaitJob(wctx, id)
		cancel()
		require.NoError(t, err, "job %s did not finish", id)
		require.Equal(t, ratchet.StatusSucceeded, j.Status)
		claimed[i] = j.ClaimedAt
	}
	mu.Lock()
	require.Len(t, starts, big+keys*perKey, "every job ran once")
	mu.Unlock()
	// From the rows: the claims of a key follow its submissions, and the
	// big key's claims are counted up to the last small-key claim.
	var last time.Time
	for k := range keys {
		for n := 1; n < perKey; n++ {
			i := big + k*perKey + n
			assert.False(t, claimed[i].Before(claimed[i-1]), "tenant %d: job %d claimed before job %d", k, n, n-1)
		}
		if c := claimed[big+k*perKey+perKey-1]; c.After(last) {
			last = c
		}
	}
	bigBefore := 0
	for _, c := range claimed[:big] {
		if c.Before(last) {
			bigBefore++
		}
	}
	return bigBefore
}

// A key with 300 jobs and 20 keys with 5 each, on three handles with a
// node of two slots on each: the small keys take their turns beside the
// big one, whose claims take about one job per round of turns (5 rounds)
// before the last small-key job is claimed, not 300.
func TestFairShareUnderLoad(t *testing.T) {
	const big, keys, perKey, bound = 300, 20, 5, 12
	check := func(t *testing.T, stores []spi.Store) {
		n := runFairShare(t, stores, big, keys, perKey)
		t.Logf("%d jobs of the big key were claimed before the last of the %d small-key jobs", n, keys*perKey)
		assert.LessOrEqual(t, n, bound, "the big key takes about one turn per round")
	}
	t.Run("postgres", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		var stores []spi.Store
		for range 3 {
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores = append(stores, s)
		}
		check(t, stores)
	})
	t.Run("mysql", func(t *testing.T) {
		dsn, db := dbtest.MySQL(t)
		var stores []spi.Store
		for range 3 {
			s, err := mysql.Open(t.Context(), dsn, mysql.Options{Database: db, ApplyMigrations: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores = append(stores, s)
		}
		check(t, stores)
	})
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fair.db")
		var stores []spi.Store
		for range 3 {
			s, err := sqlite.Open(t.Context(), path, sqlite.Options{Create: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores = append(stores, s)
		}
		check(t, stores)
	})
}
