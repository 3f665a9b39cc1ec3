package tools_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
	"github.com/ratchet-go/ratchet/stores/mongodb"
	"github.com/ratchet-go/ratchet/stores/mongodb/ferrettest"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// A job's page in the dashboard shows every run of the job, each with
// its node, start, end, duration, outcome and error (a panic's stack
// trace folded below its first line), on memory, SQLite, PostgreSQL,
// MariaDB and FerretDB: a job that failed twice and then succeeded, and
// one that panicked on every run into the dead-letter queue.
func TestDashboardShowsEveryAttemptOnEveryStore(t *testing.T) {
	t.Run("memory", func(t *testing.T) { checkAttemptsPage(t, memory.New()) })
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "attempts.db"), sqlite.Options{Create: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		checkAttemptsPage(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		checkAttemptsPage(t, s)
	})
	t.Run("mysql", func(t *testing.T) {
		dsn, db := dbtest.MySQL(t)
		s, err := mysql.Open(t.Context(), dsn, mysql.Options{Database: db, ApplyMigrations: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		checkAttemptsPage(t, s)
	})
	t.Run("ferretdb", func(t *testing.T) {
		dir := t.TempDir()
		bin, err := ferrettest.Build(t.Context(), dir)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("build FerretDB: %v", err)
			}
			t.Skipf("FerretDB cannot be built here: %v", err)
		}
		srv, err := ferrettest.Start(t.Context(), ferrettest.Options{Binary: bin, Dir: t.TempDir(), Log: io.Discard})
		require.NoError(t, err)
		t.Cleanup(srv.Close)
		s, err := mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: "attempts"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		checkAttemptsPage(t, s)
	})
}

func checkAttemptsPage(t *testing.T, store spi.Store) {
	ctx := t.Context()
	var runs atomic.Int32
	flaky := ratchet.NewVoidTask("pay.flaky", func(context.Context, struct{}) error {
		if runs.Add(1) <= 2 {
			return fmt.Errorf("run %d: the gateway answered 503", runs.Load())
		}
		return nil
	})
	crash := ratchet.NewVoidTask("pay.crash", func(context.Context, struct{}) error {
		var m map[string]int
		m["boom"]++ // a panic: assignment to entry in nil map
		return nil
	})
	eng, err := engine.New(store, engine.Options{
		Client:       ratchet.ClientOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		NodeID:       "node-a",
		Concurrency:  2,
		PollInterval: 20 * time.Millisecond,
	}, flaky, crash)
	require.NoError(t, err)
	events, unsubscribe := eng.Subscribe(100)
	defer unsubscribe()
	require.NoError(t, eng.Start(ctx))
	defer func() { _ = eng.Stop(context.Background()) }()

	retry := []ratchet.SubmitOption{ratchet.WithMaxRetries(2), ratchet.WithBackoff(ratchet.BackoffFixed, 10*time.Millisecond)}
	okID, err := flaky.Submit(ctx, eng.Client(), struct{}{}, retry...)
	require.NoError(t, err)
	crashID, err := crash.Submit(ctx, eng.Client(), struct{}{}, retry...)
	require.NoError(t, err)
	awaitOutcomes(t, events, map[uuid.UUID]engine.EventKind{okID: engine.EventSucceeded, crashID: engine.EventFailed})

	h, err := dashboard.New(eng.Client(), dashboard.Options{Credentials: []dashboard.Credential{{Name: "v", Token: "attempts-t0ken"}},
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	page := func(id uuid.UUID) []string {
		req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/jobs/"+id.String(), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer attempts-t0ken")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		body := string(b)
		i, j := strings.Index(body, `<table class="grid attempts">`), strings.Index(body, "<h2>Log</h2>")
		require.True(t, i >= 0 && j > i, "the page has an attempts table")
		return regexp.MustCompile(`(?s)<tr><td class="num">\d+</td>.*?</tr>`).FindAllString(body[i:j], -1)
	}
	cell := `<td class="mono"><time datetime="[^"]+"[^>]*>[^<]+</time></td>`
	took := `<td>\d+(\.\d+)?(µs|ms|s)</td>`

	rows := page(okID)
	require.Len(t, rows, 3, "two failed runs and the success")
	for i, r := range rows {
		assert.Regexp(t, `<td class="mono">node-a</td>`+cell+cell+took, r, "run %d: node, start, end, duration", i+1)
	}
	assert.Contains(t, rows[0], `out-failed">failed</span>`)
	assert.Contains(t, rows[0], "run 1: the gateway answered 503")
	assert.Contains(t, rows[1], "run 2: the gateway answered 503")
	assert.Contains(t, rows[2], `out-succeeded">succeeded</span>`)

	rows = page(crashID)
	require.Len(t, rows, 3, "three runs that panicked")
	for i, r := range rows {
		assert.Regexp(t, `<td class="mono">node-a</td>`+cell+cell+took, r, "run %d", i+1)
		assert.Contains(t, r, `out-failed">failed</span>`)
		assert.Contains(t, r, "assignment to entry in nil map", "run %d: the panic's message", i+1)
		assert.Contains(t, r, "<summary>Stack trace</summary>", "run %d: the stack trace, folded", i+1)
		assert.Regexp(t, `<summary>Stack trace</summary><pre>[^\n]*checkAttemptsPage\.func\d+\(`, r, "run %d: the trace starts at the panicking body", i+1)
	}
}

// awaitOutcomes waits until each job has had its event, for a minute.
func awaitOutcomes(t *testing.T, events <-chan engine.Event, want map[uuid.UUID]engine.EventKind) {
	t.Helper()
	timeout := time.After(time.Minute)
	for len(want) > 0 {
		select {
		case ev := <-events:
			if k, ok := want[ev.JobID]; ok && k == ev.Kind {
				delete(want, ev.JobID)
			}
		case <-timeout:
			t.Fatal(errors.New("the jobs did not reach their outcome within a minute"), want)
		}
	}
}
