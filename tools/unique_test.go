package tools_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// uniquePairs is the number of distinct (arguments, period) pairs of the
// unique tests: 50 arguments in each of two periods.
const uniquePairs = 100

// uniqueTask is the task the unique tests submit; nothing runs it.
var uniqueTask = ratchet.NewVoidTask("unique.sync", func(context.Context, int) error { return nil })

// uniqueOpt makes a submission unique by arguments and hour.
var uniqueOpt = ratchet.WithUnique(ratchet.UniqueOpts{ByArgs: true, ByPeriod: time.Hour})

// uniqueRig is one submitter ("process"): a store handle of its own and a
// client for each of the two periods.
type uniqueRig struct {
	store   spi.Store
	clients [2]*ratchet.Client
	inTx    func(ctx context.Context, fn func(tx any) error) error // nil: the store joins no transaction
}

// newUniqueRig returns a rig over store, whose clients' clocks stand in
// two successive hours.
func newUniqueRig(t testing.TB, store spi.Store, inTx func(ctx context.Context, fn func(tx any) error) error) *uniqueRig {
	r := &uniqueRig{store: store, inTx: inTx}
	hour := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for p := range r.clients {
		c, err := ratchet.NewClient(store, ratchet.ClientOptions{Logger: quiet, Clock: clockwork.NewFakeClockAt(hour.Add(time.Duration(p)*time.Hour + 30*time.Minute))})
		require.NoError(t, err)
		r.clients[p] = c
	}
	return r
}

// submit makes submission n: pair n % uniquePairs, inside a transaction
// of its own for odd n when the store joins one.
func (r *uniqueRig) submit(ctx context.Context, n int) (uuid.UUID, error) {
	pair := n % uniquePairs
	c := r.clients[pair/(uniquePairs/2)]
	args := pair % (uniquePairs / 2)
	return submitHalfInTx(ctx, r.inTx, n, func(opts ...ratchet.SubmitOption) (uuid.UUID, error) {
		return uniqueTask.Submit(ctx, c, args, append(opts, uniqueOpt)...)
	})
}

// submitHalfInTx makes submission n with submit: inside a transaction of
// its own (inTx) for odd n when the store joins one, else alone.
func submitHalfInTx(ctx context.Context, inTx func(ctx context.Context, fn func(tx any) error) error, n int,
	submit func(opts ...ratchet.SubmitOption) (uuid.UUID, error)) (uuid.UUID, error) {
	if inTx == nil || n%2 == 0 {
		return submit()
	}
	var id uuid.UUID
	err := inTx(ctx, func(tx any) (err error) {
		id, err = submit(ratchet.InTx(tx))
		return err
	})
	return id, err
}

// sqlTx runs fn in a transaction of db, again on a deadlock or a
// serialization failure (what an application does with its own).
func sqlTx(db *sql.DB) func(ctx context.Context, fn func(tx any) error) error {
	return func(ctx context.Context, fn func(tx any) error) error {
		for try := 0; ; try++ {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if err = fn(tx); err == nil {
				err = tx.Commit()
			} else {
				_ = tx.Rollback()
			}
			if err == nil || try == 20 || !retryableTx(err) {
				return err
			}
		}
	}
}

// pgTx is sqlTx for a pgx pool.
func pgTx(s *postgres.Store) func(ctx context.Context, fn func(tx any) error) error {
	return func(ctx context.Context, fn func(tx any) error) error {
		return pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error { return fn(tx) })
	}
}

// retryableTx reports a deadlock (MySQL 1213) or a lock wait timeout.
func retryableTx(err error) bool {
	s := err.Error()
	return strings.Contains(s, "1213") || strings.Contains(s, "Deadlock") || strings.Contains(s, "1205")
}

// runUnique makes total submissions over the rigs, with workers
// goroutines per rig, and checks that they made exactly uniquePairs jobs,
// and that every submission of a pair got its one job's id.
func runUnique(t *testing.T, rigs []*uniqueRig, total, workers int) {
	ctx := t.Context()
	ids := make([]uuid.UUID, total)
	errs := make([]error, total)
	var wg sync.WaitGroup
	for r, rig := range rigs {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := r*workers + w; n < total; n += len(rigs) * workers {
					ids[n], errs[n] = rig.submit(ctx, n)
				}
			}()
		}
	}
	wg.Wait()
	byPair := map[int]uuid.UUID{}
	for n := range total {
		require.NoError(t, errs[n], "submission %d", n)
		if first, ok := byPair[n%uniquePairs]; ok {
			assert.Equal(t, first, ids[n], "submission %d of pair %d", n, n%uniquePairs)
		} else {
			byPair[n%uniquePairs] = ids[n]
		}
	}
	jobs, err := rigs[0].clients[0].ListJobs(ctx, ratchet.ListOptions{Limit: 10 * uniquePairs})
	require.NoError(t, err)
	assert.Len(t, jobs.Jobs, uniquePairs, "one job per (arguments, period) pair")
}

// Unique submissions from three store handles at once (three processes,
// as the database sees them), half inside transactions, make one job per
// pair, on each SQL store that runs here.
func TestUniqueSubmissionsAtOnce(t *testing.T) {
	const total, workers = 1200, 4
	t.Run("postgres", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		var rigs []*uniqueRig
		for range 3 {
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			rigs = append(rigs, newUniqueRig(t, s, pgTx(s)))
		}
		runUnique(t, rigs, total, workers)
	})
	t.Run("mysql", func(t *testing.T) {
		dsn, db := dbtest.MySQL(t)
		var rigs []*uniqueRig
		for range 3 {
			s, err := mysql.Open(t.Context(), dsn, mysql.Options{Database: db, ApplyMigrations: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			rigs = append(rigs, newUniqueRig(t, s, sqlTx(s.DB())))
		}
		runUnique(t, rigs, total, workers)
	})
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "unique.db")
		var rigs []*uniqueRig
		for range 3 {
			s, err := sqlite.Open(t.Context(), path, sqlite.Options{Create: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			rigs = append(rigs, newUniqueRig(t, s, sqlTx(s.DB())))
		}
		runUnique(t, rigs, total, workers)
	})
}

// uniqueChildEnv names, in a child process of TestUniqueThreeProcessesLong,
// the PostgreSQL DSN, schema, the child's index and the total.
const uniqueChildEnv = "RATCHET_TEST_UNIQUE_CHILD"

// The acceptance run, opt-in: 10,000 submissions of 100 pairs from three
// OS processes at once (this test binary, run again), half of them inside
// transactions, make exactly 100 jobs on PostgreSQL.
func TestUniqueThreeProcessesLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") == "" {
		t.Skip("set RATCHET_TEST_LONG=1 to run 10,000 unique submissions from three processes")
	}
	const total = 10000
	dsn, schema := dbtest.Postgres(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	defer s.Close()
	start := time.Now()
	var cmds []*exec.Cmd
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUniqueChild$", "-test.v")
		cmd.Env = append(os.Environ(), uniqueChildEnv+"="+strings.Join([]string{dsn, schema, strconv.Itoa(i), strconv.Itoa(total)}, "\x1f"))
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	var got []map[int]string
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}
	t.Logf("3 processes, %d submissions: %s", total, time.Since(start).Round(time.Millisecond))
	out, err := os.ReadFile(filepath.Join(os.TempDir(), "ratchet-unique-"+schema))
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[int]string
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		got = append(got, m)
	}
	require.Len(t, got, 3)
	for pair := range uniquePairs {
		for _, m := range got[1:] {
			assert.Equal(t, got[0][pair], m[pair], "pair %d: every process got the one job's id", pair)
		}
	}
	var n int
	require.NoError(t, s.Pool().QueryRow(t.Context(), fmt.Sprintf(`SELECT count(*) FROM %q.scheduler_job`, schema)).Scan(&n))
	assert.Equal(t, uniquePairs, n, "one job per (arguments, period) pair")
}

// TestUniqueChild is one process of TestUniqueThreeProcessesLong; it
// skips when run on its own.
func TestUniqueChild(t *testing.T) {
	env := os.Getenv(uniqueChildEnv)
	if env == "" {
		t.Skip("a child process of TestUniqueThreeProcessesLong")
	}
	f := strings.Split(env, "\x1f")
	dsn, schema := f[0], f[1]
	index, _ := strconv.Atoi(f[2])
	total, _ := strconv.Atoi(f[3])
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	rig := newUniqueRig(t, s, pgTx(s))
	const workers = 8
	var mu sync.Mutex
	ids := map[int]string{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := index*workers + w; n < total; n += 3 * workers {
				id, err := rig.submit(t.Context(), n)
				if !assert.NoError(t, err, "submission %d", n) {
					return
				}
				mu.Lock()
				if prev, ok := ids[n%uniquePairs]; ok && prev != id.String() {
					t.Errorf("pair %d: ids %s and %s", n%uniquePairs, prev, id)
				}
				ids[n%uniquePairs] = id.String()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b, err := json.Marshal(ids)
	require.NoError(t, err)
	f2, err := os.OpenFile(filepath.Join(os.TempDir(), "ratchet-unique-"+schema), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer f2.Close()
	_, err = f2.Write(append(b, '\n'))
	require.NoError(t, err)
}
