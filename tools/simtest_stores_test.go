package tools_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest"
	"github.com/ratchet-go/ratchet/stores/memory"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// storeOpeners open a fresh, empty store of every kind that runs here, each
// on a database or schema of the test's own.
var storeOpeners = map[string]func(t *testing.T) spi.Store{
	"memory": func(*testing.T) spi.Store { return memory.New() },
	"sqlite": func(t *testing.T) spi.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Create: true})
		require.NoError(t, err)
		return s
	},
	"postgres": func(t *testing.T) spi.Store {
		dsn, schema := dbtest.Postgres(t)
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
		require.NoError(t, err)
		return s
	},
	"mysql": func(t *testing.T) spi.Store {
		dsn, database := dbtest.MySQL(t)
		s, err := mysql.Open(t.Context(), dsn, mysql.Options{Database: database, ApplyMigrations: true})
		require.NoError(t, err)
		return s
	},
}

// observedStore counts claims and forwards every capability of the store
// under it. When claimed is set, it receives the size of each claim's result
// (dropped when full); when hints is set, it receives each wakeup the
// engine's listener is given.
type observedStore struct {
	spi.Store
	claims  atomic.Int64
	claimed chan int
	hints   chan spi.WakeupHint
}

func (s *observedStore) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	s.claims.Add(1)
	jobs, err := s.Store.ClaimJobs(ctx, p)
	if s.claimed != nil && err == nil {
		select {
		case s.claimed <- len(jobs):
		default:
		}
	}
	return jobs, err
}

func (s *observedStore) Capabilities() spi.Capabilities {
	c := spi.CapabilitiesOf(s.Store)
	if c.Wakeups != nil && s.hints != nil {
		c.Wakeups = observedWakeups{inner: c.Wakeups, hints: s.hints}
	}
	return c
}

type observedWakeups struct {
	inner spi.WakeupListener
	hints chan spi.WakeupHint
}

func (w observedWakeups) ListenWakeups(ctx context.Context, fn func(spi.WakeupHint)) error {
	return w.inner.ListenWakeups(ctx, func(h spi.WakeupHint) {
		select {
		case w.hints <- h:
		default:
		}
		fn(h)
	})
}

// The simtest Env over a database-backed store claims about as often as
// over memory (at most 2 claims per execution plus 10: it used to wake the
// engine whenever a store call was in progress, thousands of claims on
// SQLite and about 200,000 on MariaDB for these 25 executions), and its
// engine sees every capability of the store (leases, claim checks).
func TestSimtestEnvOnEveryStore(t *testing.T) {
	for name, open := range storeOpeners {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inner := open(t)
			t.Cleanup(func() { _ = inner.Close() })
			store := &observedStore{Store: inner}
			boom := errors.New("boom")
			var env *simtest.Env
			task := ratchet.NewTask("work", func(ctx context.Context, n int) (int, error) {
				jc, _ := ratchet.JobFromContext(ctx)
				// A body that reads the database, as real ones do, so it
				// takes real time while other slots are free.
				for range 3 {
					if _, err := env.Client().GetJob(ctx, jc.ID); err != nil {
						return 0, err
					}
				}
				if n%4 == 0 && jc.Run == 1 {
					return 0, boom
				}
				return n * 2, nil
			})
			env = simtest.NewEnv(t, simtest.EnvOptions{Store: store, Engine: engine.Options{Concurrency: 4}}, task)
			ctx := context.Background()
			args := make([]int, 20)
			for i := range args {
				args[i] = i
			}
			ids, err := task.SubmitMany(ctx, env.Client(), args,
				ratchet.WithBackoff(ratchet.BackoffFixed, time.Second))
			require.NoError(t, err)
			env.RunUntilIdle()

			for _, id := range ids {
				assert.Equal(t, ratchet.StatusSucceeded, env.Status(id))
			}
			execs := len(env.Executions())
			require.Equal(t, 25, execs, "20 jobs, 5 of them retried once")
			claims := int(store.claims.Load())
			t.Logf("%s: %d claims for %d executions", name, claims, execs)
			assert.LessOrEqual(t, claims, 2*execs+10, "claims per execution")

			// The Env's engine sees the store's capabilities.
			got, want := spi.CapabilitiesOf(env.Store()), spi.CapabilitiesOf(inner)
			assert.Equal(t, want.Leases != nil, got.Leases != nil, "leases")
			assert.Equal(t, want.Claims != nil, got.Claims != nil, "claim checks")
			assert.Equal(t, want.Tx != nil, got.Tx != nil, "transactional inserts")
			assert.Equal(t, want.Wakeups != nil, got.Wakeups != nil, "wakeups")
			assert.Equal(t, want.State != nil, got.State != nil, "state")
			assert.Equal(t, want.Properties != nil, got.Properties != nil, "properties")
			sc, err := env.Engine().StartupCoordinator()
			require.NoError(t, err)
			held, err := sc.TryAcquire(ctx, "migrate", time.Minute)
			require.NoError(t, err)
			assert.True(t, held)
		})
	}
}
