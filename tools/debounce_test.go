package tools_test

import (
	"context"
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

// debounceKeys is the number of keys of the debounce tests.
const debounceKeys = 100

// debounceTask is the task the debounce tests submit; nothing runs it.
var debounceTask = ratchet.NewVoidTask("debounce.reindex", func(context.Context, int) error { return nil })

// debounceRig is one submitter ("process") of the debounce tests: a
// client over a store handle of its own.
type debounceRig struct {
	client *ratchet.Client
	inTx   func(ctx context.Context, fn func(tx any) error) error
}

// submit makes a debounced submission for key k (window w), inside a
// transaction of its own for odd n when the store joins one.
func (r *debounceRig) submit(ctx context.Context, n, k int, w time.Duration) (uuid.UUID, error) {
	opt := ratchet.WithDebounce(fmt.Sprint("doc-", k), w)
	return submitHalfInTx(ctx, r.inTx, n, func(opts ...ratchet.SubmitOption) (uuid.UUID, error) {
		return debounceTask.Submit(ctx, r.client, k, append(opts, opt)...)
	})
}

// checkDebounced checks that the submissions made exactly one job per key
// and window: ids[window][key] are the ids they returned.
func checkDebounced(t *testing.T, c *ratchet.Client, ids [][debounceKeys][]uuid.UUID) {
	seen := map[uuid.UUID]string{}
	for w := range ids {
		for k, got := range ids[w] {
			require.NotEmpty(t, got, "window %d, key %d: no submission", w, k)
			for _, id := range got {
				assert.Equal(t, got[0], id, "window %d, key %d: every submission joins one job", w, k)
			}
			where := fmt.Sprintf("window %d, key %d", w, k)
			if prev, ok := seen[got[0]]; ok {
				t.Errorf("%s joined the job of %s", where, prev)
			}
			seen[got[0]] = where
		}
	}
	page, err := c.ListJobs(t.Context(), ratchet.ListOptions{Limit: 10000})
	require.NoError(t, err)
	assert.Len(t, page.Jobs, len(ids)*debounceKeys, "one job per key and window")
}

// Debounced submissions from three store handles at once, half inside
// transactions, in bursts over 100 keys and two windows, make one job per
// key and window, on each SQL store that runs here. The three clients
// share a fake clock, moved to the next window between the bursts.
func TestDebouncedSubmissionsAtOnce(t *testing.T) {
	const windows, perKey, workers = 2, 6, 4
	const window = time.Minute
	run := func(t *testing.T, stores []spi.Store, inTx []func(context.Context, func(any) error) error) {
		clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
		rigs := make([]*debounceRig, len(stores))
		for i, s := range stores {
			c, err := ratchet.NewClient(s, ratchet.ClientOptions{Logger: quiet, Clock: clock})
			require.NoError(t, err)
			rigs[i] = &debounceRig{client: c, inTx: inTx[i]}
		}
		ids := make([][debounceKeys][]uuid.UUID, windows)
		var mu sync.Mutex
		for w := range windows {
			// A burst: each key perKey times, from every rig at once.
			var wg sync.WaitGroup
			for r, rig := range rigs {
				for g := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for n := r*workers + g; n < debounceKeys*perKey; n += len(rigs) * workers {
							k := n % debounceKeys
							id, err := rig.submit(t.Context(), n, k, window)
							if !assert.NoError(t, err, "window %d, submission %d", w, n) {
								return
							}
							mu.Lock()
							ids[w][k] = append(ids[w][k], id)
							mu.Unlock()
						}
					}()
				}
			}
			wg.Wait()
			clock.Advance(window)
		}
		checkDebounced(t, rigs[0].client, ids)
	}
	t.Run("postgres", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		var stores []spi.Store
		var txs []func(context.Context, func(any) error) error
		for range 3 {
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores, txs = append(stores, s), append(txs, pgTx(s))
		}
		run(t, stores, txs)
	})
	t.Run("mysql", func(t *testing.T) {
		dsn, db := dbtest.MySQL(t)
		var stores []spi.Store
		var txs []func(context.Context, func(any) error) error
		for range 3 {
			s, err := mysql.Open(t.Context(), dsn, mysql.Options{Database: db, ApplyMigrations: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores, txs = append(stores, s), append(txs, sqlTx(s.DB()))
		}
		run(t, stores, txs)
	})
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "debounce.db")
		var stores []spi.Store
		var txs []func(context.Context, func(any) error) error
		for range 3 {
			s, err := sqlite.Open(t.Context(), path, sqlite.Options{Create: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores, txs = append(stores, s), append(txs, sqlTx(s.DB()))
		}
		run(t, stores, txs)
	})
}

// debounceChildEnv names, in a child process of
// TestDebounceThreeProcessesLong, the PostgreSQL DSN, the schema, the
// child's index and the wall-clock start of the first burst (Unix ms).
const debounceChildEnv = "RATCHET_TEST_DEBOUNCE_CHILD"

// The long run's shape: 10 windows of 100 keys, 10 submissions of each
// key per window, from three processes; a burst lasts at most
// debounceBurst from its start, the window is debounceWindow, and bursts
// start debounceEvery apart, so that a burst's submissions all fall in the
// window its first opened, and the next burst's in a new one.
const (
	debounceWindows = 10
	debouncePerKey  = 10
	debounceBurst   = time.Second
	debounceWindow  = 1900 * time.Millisecond
	debounceEvery   = 3 * time.Second
)

// The acceptance run, opt-in: 10,000 debounced submissions in bursts over
// 100 keys from three OS processes at once (this test binary, run again),
// half of them inside transactions, on the wall clock, make exactly one
// job per key and window on PostgreSQL.
func TestDebounceThreeProcessesLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") == "" {
		t.Skip("set RATCHET_TEST_LONG=1 to run 10,000 debounced submissions from three processes")
	}
	dsn, schema := dbtest.Postgres(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	defer s.Close()
	start := time.Now().Add(2 * time.Second).Truncate(time.Second)
	out := filepath.Join(t.TempDir(), "ids")
	var cmds []*exec.Cmd
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDebounceChild$", "-test.v")
		cmd.Env = append(os.Environ(), debounceChildEnv+"="+strings.Join([]string{dsn, schema, strconv.Itoa(i), strconv.FormatInt(start.UnixMilli(), 10), out}, "\x1f"))
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	ids := make([][debounceKeys][]uuid.UUID, debounceWindows)
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var part [][debounceKeys][]uuid.UUID
		require.NoError(t, json.Unmarshal([]byte(line), &part))
		for w := range part {
			for k := range part[w] {
				ids[w][k] = append(ids[w][k], part[w][k]...)
				n += len(part[w][k])
			}
		}
	}
	t.Logf("%d submissions from 3 processes in %d bursts", n, debounceWindows)
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	checkDebounced(t, c, ids)
}

// TestDebounceChild is one process of TestDebounceThreeProcessesLong; it
// skips when run on its own.
func TestDebounceChild(t *testing.T) {
	env := os.Getenv(debounceChildEnv)
	if env == "" {
		t.Skip("a child process of TestDebounceThreeProcessesLong")
	}
	f := strings.Split(env, "\x1f")
	dsn, schema, out := f[0], f[1], f[4]
	index, _ := strconv.Atoi(f[2])
	ms, _ := strconv.ParseInt(f[3], 10, 64)
	start := time.UnixMilli(ms)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	rig := &debounceRig{client: c, inTx: pgTx(s)}
	const workers = 8
	ids := make([][debounceKeys][]uuid.UUID, debounceWindows)
	var mu sync.Mutex
	for w := range debounceWindows {
		burst := start.Add(time.Duration(w) * debounceEvery)
		<-time.After(time.Until(burst)) // the bursts are on the wall clock, shared by the three processes
		var wg sync.WaitGroup
		for g := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := index*workers + g; n < debounceKeys*debouncePerKey; n += 3 * workers {
					k := n % debounceKeys
					id, err := rig.submit(t.Context(), n, k, debounceWindow)
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					ids[w][k] = append(ids[w][k], id)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Less(t, time.Since(burst), debounceBurst, "burst %d outlasted its second: the check would not hold", w)
	}
	b, err := json.Marshal(ids)
	require.NoError(t, err)
	fh, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer fh.Close()
	_, err = fh.Write(append(b, '\n'))
	require.NoError(t, err)
}
