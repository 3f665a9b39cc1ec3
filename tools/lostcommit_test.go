package tools_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// burnThrough runs n no-op jobs through an engine on store and checks that
// each success is reported exactly once and none as superseded.
func burnThrough(t *testing.T, store spi.Store, n int) {
	t.Helper()
	task := ratchet.NewTask("answer", func(_ context.Context, i int) (int, error) { return i, nil })
	eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, Concurrency: 16}, task)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(10_000)
	defer unsub()
	require.NoError(t, eng.Start(t.Context()))
	defer func() { _ = eng.Stop(context.Background()) }()
	args := make([]int, n)
	for i := range args {
		args[i] = i
	}
	ids, err := task.SubmitMany(t.Context(), eng.Client(), args)
	require.NoError(t, err)
	got := map[string]int{}
	timeout := time.After(90 * time.Second)
	for len(got) < n {
		select {
		case ev := <-events:
			require.NotEqual(t, engine.EventSuperseded, ev.Kind, "job %s reported superseded", ev.JobID)
			require.Equal(t, engine.EventSucceeded, ev.Kind, "job %s: %s", ev.JobID, ev.Error)
			got[ev.JobID.String()]++
		case <-timeout:
			t.Fatalf("%d of %d successes reported", len(got), n)
		}
	}
	for _, id := range ids {
		assert.Equal(t, 1, got[id.String()], "job %s reported once", id)
	}
	select {
	case ev := <-events:
		t.Fatalf("an event after every job succeeded: %+v", ev)
	default:
	}
}

// PostgreSQL through a TCP proxy that drops the server's answer to the
// completion statement (its implicit commit done) and closes the
// connection: the engine sends the batch again, the store recognises what
// applied, and every success is reported exactly once.
func TestLostCommitAnswerPostgres(t *testing.T) {
	dsn, schema := dbtest.Postgres(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := dbtest.NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	q := u.Query()
	// Send each statement's text (no statement cache), so the proxy can
	// tell the completion statement.
	q.Set("default_query_exec_mode", "exec")
	u.RawQuery = q.Encode()
	store, err := postgres.Open(t.Context(), u.String(), postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	readyForQuery := []byte{'Z', 0, 0, 0, 5}
	proxy.LoseAnswers(3,
		func() func([]byte) bool { // matches the completion batches: of any outcomes, or of successes alone
			return func(req []byte) bool {
				return bytes.Contains(req, []byte("job_result, result_type) = (")) || bytes.Contains(req, []byte("job_result = u.res"))
			}
		},
		func(answer []byte) bool { return bytes.Contains(answer, readyForQuery) })
	burnThrough(t, store, 300)
	assert.Equal(t, 3, proxy.Lost(), "three completion answers were lost")
}

// MariaDB through a TCP proxy that drops the server's answer to the COMMIT
// of a completion batch and closes the connection.
func TestLostCommitAnswerMariaDB(t *testing.T) {
	dsn, database := dbtest.MySQL(t)
	cfg, err := gomysql.ParseDSN(dsn)
	require.NoError(t, err)
	proxy := dbtest.NewProxy(t, cfg.Addr)
	cfg.Addr = proxy.Addr()
	store, err := mysql.Open(t.Context(), cfg.FormatDSN(), mysql.Options{Database: database, ApplyMigrations: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	proxy.LoseAnswers(3,
		func() func([]byte) bool { // matches the completion batch
			completing := false // this connection's transaction wrote completions
			return func(req []byte) bool {
				if len(req) < 5 || req[4] != 0x03 { // COM_QUERY
					return false
				}
				text := string(req[5:])
				switch {
				case strings.Contains(text, "AS rtype"):
					completing = true
				case text == "COMMIT" && completing:
					completing = false
					return true
				case strings.HasPrefix(text, "COMMIT") || strings.HasPrefix(text, "ROLLBACK"):
					completing = false
				}
				return false
			}
		},
		func(answer []byte) bool { return len(answer) > 0 })
	burnThrough(t, store, 300)
	assert.Equal(t, 3, proxy.Lost(), "three COMMIT answers were lost")
}
