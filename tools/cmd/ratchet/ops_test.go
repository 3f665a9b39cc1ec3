package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/jobjson"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

type signup struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// opsStore fills an SQLite file: 4 jobs of a task whose bodies fail for
// good (the DLQ), 3 PENDING jobs of another task (no node runs it), and a
// recurring schedule; it returns the file and the ids of each group.
func opsStore(t *testing.T) (db string, failed, pending []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	db = filepath.Join(t.TempDir(), "ops.db")
	s, err := sqlite.Open(ctx, db, sqlite.Options{Create: true})
	require.NoError(t, err)
	defer s.Close()
	bounce := ratchet.NewVoidTask("email.bounce", func(ctx context.Context, a signup) error {
		return ratchet.DoNotRetry(errors.New("no such mailbox"))
	})
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)}, NodeID: "ops-node"}, bounce)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(16)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	for i := range 4 {
		id, err := bounce.Submit(ctx, eng.Client(), signup{Email: "ann@example.com", Password: "hunter" + string(rune('0'+i))},
			ratchet.WithParam("tenant", "acme"), ratchet.WithParam("api_key", "key-"+string(rune('0'+i))))
		require.NoError(t, err)
		failed = append(failed, id)
	}
	for range 4 {
		require.Equal(t, engine.EventFailed, (<-events).Kind)
	}
	report := ratchet.NewVoidTask("report.build", func(context.Context, int) error { return nil })
	for i := range 3 {
		var opts []ratchet.SubmitOption
		if i == 2 { // the job controls jobs show names
			opts = []ratchet.SubmitOption{ratchet.WithTimeout(2 * time.Second), ratchet.WithTimeoutNotRetried(),
				ratchet.WithStartBy(time.Date(2099, 1, 2, 3, 4, 5, 0, time.UTC))}
		}
		id, err := report.Submit(ctx, eng.Client(), i, opts...)
		require.NoError(t, err)
		pending = append(pending, id)
	}
	_, err = eng.Client().PutSchedule(ctx, report.Recurring("nightly", "0 3 * * *", 7))
	require.NoError(t, err)
	require.NoError(t, eng.Stop(ctx))
	return db, failed, pending
}

// cli runs the tool and returns its exit status, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestJobsListShowAndFilters(t *testing.T) {
	db, failed, pending := opsStore(t)
	store := "sqlite:" + db

	code, out, errOut := cli(t, "jobs", "list", "--store", store)
	require.Equal(t, 0, code, errOut)
	for _, id := range append(append([]uuid.UUID{}, failed...), pending...) {
		assert.Contains(t, out, id.String())
	}
	assert.Contains(t, out, "no such mailbox", "the table shows the last error")

	code, out, _ = cli(t, "jobs", "list", "--store", store, "--task", "report.build", "--json")
	require.Equal(t, 0, code)
	var page struct {
		Jobs []jobjson.Job `json:"jobs"`
		Next string        `json:"next"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	require.Len(t, page.Jobs, 3)
	assert.Equal(t, spi.StatusPending, page.Jobs[0].Status)

	// Keyset pages: two of the four FAILED jobs, then the rest from --after.
	code, out, _ = cli(t, "dlq", "--store", store, "--limit", "2", "--json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	require.Len(t, page.Jobs, 2)
	require.NotEmpty(t, page.Next)
	code, out, _ = cli(t, "dlq", "list", "--store", store, "--limit", "2", "--after", page.Next, "--json")
	require.Equal(t, 0, code)
	var rest struct {
		Jobs []jobjson.Job `json:"jobs"`
		Next string        `json:"next"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rest))
	require.Len(t, rest.Jobs, 2)
	assert.Equal(t, failed[2], rest.Jobs[0].ID)

	code, out, _ = cli(t, "jobs", "list", "--store", store, "--task", "nothing.here")
	assert.Equal(t, 0, code, "a filter that matches nothing is not an error")
	assert.Contains(t, out, "no jobs match")

	code, out, errOut = cli(t, "jobs", "show", "--store", store, failed[0].String())
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "email.bounce")
	assert.Contains(t, out, "arguments (masked)")
	assert.Contains(t, out, "ann@example.com")
	assert.NotContains(t, out, "hunter0", "the password is masked")
	assert.NotContains(t, out, "key-0", "a param of a sensitive name is masked")
	assert.Contains(t, out, "acme", "the other params are shown")
	assert.Contains(t, out, "crash count")
	assert.NotContains(t, out, "run timeout", "no timeout of its own: no row")

	code, out, errOut = cli(t, "jobs", "show", "--store", store, pending[2].String())
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `run timeout +2s, not retried`, out)
	assert.Regexp(t, `start by +2099-01-02T03:04:05Z`, out)

	code, out, _ = cli(t, "jobs", "list", "--store", store, "--error", "MAILBOX", "--priority", "normal,high", "--json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	assert.Len(t, page.Jobs, 4, "--error ignores case; --priority takes names")
	code, out, _ = cli(t, "jobs", "list", "--store", store, "--priority", "CRITICAL")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no jobs match")
	code, _, errOut = cli(t, "jobs", "list", "--store", store, "--priority", "urgent")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--priority "urgent": not a priority`)

	code, _, errOut = cli(t, "jobs", "list", "--store", store, "--status", "LOST")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--status "LOST": not a job state`)
}

func TestBulkRetryAndCancelByFilter(t *testing.T) {
	db, failed, pending := opsStore(t)
	store := "sqlite:" + db
	statusOf := func(id uuid.UUID) spi.Status {
		s, err := sqlite.Open(context.Background(), db, sqlite.Options{})
		require.NoError(t, err)
		defer s.Close()
		j, err := s.GetJob(context.Background(), id)
		require.NoError(t, err)
		return j.Status
	}

	code, out, errOut := cli(t, "dlq", "retry", "--store", store, "--dry-run")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "4 jobs match --status \"FAILED\"")
	assert.Contains(t, out, failed[0].String(), "the first matching jobs are shown")
	assert.Contains(t, out, "nothing changed (--dry-run)")

	// Off a terminal, a change by filter without --yes changes nothing.
	code, _, errOut = cli(t, "jobs", "retry", "--store", store, "--status", "FAILED", "--task", "email.bounce")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "refusing to retry 4 jobs by filter without --yes")
	assert.Equal(t, spi.StatusFailed, statusOf(failed[0]), "nothing changed")

	code, out, errOut = cli(t, "jobs", "retry", "--store", store, "--status", "FAILED", "--task", "email.bounce", "--json", "--yes")
	require.Equal(t, 0, code, errOut)
	var res bulkView
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, bulkView{Action: "retry", Matching: 4, Changed: 4, Skipped: []skippedView{}}, res)
	assert.NotContains(t, errOut, "retry", "no progress bar off a terminal")
	for _, id := range failed {
		assert.Equal(t, spi.StatusPending, statusOf(id), "job %s is back in the queue", id)
	}

	code, out, _ = cli(t, "dlq", "retry", "--store", store)
	assert.Equal(t, 0, code, "an empty DLQ retries nothing, without an error or a question")
	assert.Contains(t, out, "0 jobs match")

	// By id: one cancelled, then the rest of the task by filter; the one
	// already cancelled is no longer PENDING, so it is not matched.
	code, out, errOut = cli(t, "jobs", "cancel", "--store", store, pending[0].String())
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1 changed, 0 skipped")
	code, _, errOut = cli(t, "jobs", "cancel", "--store", store, "--task", "report.build", "--status", "PENDING")
	assert.Equal(t, 1, code, "off a terminal, no --yes: refused")
	assert.Contains(t, errOut, "refusing to cancel 2 jobs by filter without --yes")
	assert.Equal(t, spi.StatusPending, statusOf(pending[1]), "nothing changed")
	code, out, errOut = cli(t, "jobs", "cancel", "--store", store, "--task", "report.build", "--status", "PENDING", "--yes")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "2 jobs match")
	assert.Contains(t, out, "2 changed, 0 skipped")
	unknown := uuid.New()
	code, out, _ = cli(t, "jobs", "cancel", "--store", store, pending[1].String(), unknown.String())
	require.Equal(t, 0, code)
	assert.Contains(t, out, "0 changed, 2 skipped", "a job that moved on is skipped, not an error")
	assert.Contains(t, out, "skipped "+pending[1].String()+": it is CANCELLED; cancel applies to PENDING, BLOCKED, WAITING, RUNNING jobs", "with its real reason")
	assert.Contains(t, out, "skipped "+unknown.String()+": no such job")
	assert.NotContains(t, out, "someone else")

	// Every change is in the audit log, with the user and host as actor.
	s, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	require.NoError(t, err)
	entries, err := s.ListAudit(context.Background(), 0, 10)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Len(t, entries, 4, "the retry by filter and the three cancels; not the refused, the dry run nor the empty DLQ's retry")
	assert.Equal(t, "jobs.bulk.retry", entries[3].Action)
	assert.Equal(t, `--status "FAILED" --task "email.bounce"`, entries[3].Target)
	assert.Equal(t, int64(4), entries[3].Count)
	assert.Equal(t, actor(), entries[3].Actor)
	assert.Contains(t, actor(), "@", "user@host")
	assert.Equal(t, "jobs.cancel", entries[0].Action)
	assert.Contains(t, entries[0].Detail, "0 changed, 2 skipped")

	code, _, errOut = cli(t, "jobs", "retry", "--store", store)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "needs at least one filter", "no filter is not every job")
	code, _, errOut = cli(t, "jobs", "retry", "--store", store, "--task", "email.bounce", failed[0].String())
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "give job ids or filters, not both")
}

// On a terminal, a change by filter asks first: anything but yes changes
// nothing.
func TestBulkByFilterAsksOnATerminal(t *testing.T) {
	db, failed, _ := opsStore(t)
	store := "sqlite:" + db
	defer func(in io.Reader, tty func(io.Writer) bool) { stdin, terminal = in, tty }(stdin, terminal)
	terminal = func(io.Writer) bool { return true }

	stdin = strings.NewReader("n\n")
	code, out, errOut := cli(t, "dlq", "retry", "--store", store)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "4 jobs match")
	assert.Contains(t, errOut, "retry 4 jobs? [y/N]")
	assert.Contains(t, errOut, "not confirmed; nothing changed")

	stdin = strings.NewReader("yes\n")
	code, out, errOut = cli(t, "dlq", "retry", "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "4 changed, 0 skipped")
	assert.Contains(t, errOut, "jobs/s", "the progress bar, in jobs/s, on a terminal")
	s, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	require.NoError(t, err)
	defer s.Close()
	j, err := s.GetJob(context.Background(), failed[0])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status)
}

// --since and --until take durations ago; the absolute flags take them
// too; both of a pair is an error.
func TestRelativeTimes(t *testing.T) {
	db, _, _ := opsStore(t)
	store := "sqlite:" + db
	code, out, errOut := cli(t, "jobs", "list", "--store", store, "--since", "1h")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "email.bounce", "created within the hour")
	code, out, _ = cli(t, "jobs", "list", "--store", store, "--until", "1h")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no jobs match", "none is older than an hour")
	code, out, _ = cli(t, "jobs", "list", "--store", store, "--created-before", "7d")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no jobs match")
	code, _, errOut = cli(t, "jobs", "list", "--store", store, "--since", "1h", "--created-from", "2h")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--created-from and --since say the same thing")
	code, _, errOut = cli(t, "jobs", "list", "--store", store, "--since", "soon")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--since "soon": want a positive duration`)
}

func TestStatsNodesAndRecurring(t *testing.T) {
	db, _, _ := opsStore(t)
	store := "sqlite:" + db

	code, out, errOut := cli(t, "stats", "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "PENDING 3, FAILED 4")
	assert.Contains(t, out, "oldest due job: due")

	code, out, _ = cli(t, "stats", "--store", store, "--json")
	require.Equal(t, 0, code)
	var st struct {
		ByStatus map[string]int64 `json:"by_status"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.Equal(t, map[string]int64{"PENDING": 3, "FAILED": 4}, st.ByStatus)

	code, out, errOut = cli(t, "nodes", "--store", store, "--within", "1000h")
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.Contains(out, "no node has beaten") || strings.Contains(out, "ops-node"), out)

	// A node's report: its version, running jobs, uptime and open breakers.
	rs, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	require.NoError(t, err)
	now := time.Now().UTC()
	require.NoError(t, rs.HeartbeatReport(t.Context(), "node-r", []string{"mail"}, spi.NodeReport{Version: "v1.2.3", Concurrency: 10, Running: 7,
		StartedAt: now.Add(-90 * time.Minute), Breakers: []spi.NodeBreaker{{Service: "smtp", State: "OPEN"}, {Service: "crm", State: "CLOSED"}}}, now))
	require.NoError(t, rs.Close())
	code, out, errOut = cli(t, "nodes", "--store", store, "--within", "1000h")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "VERSION  RUNNING  UPTIME")
	assert.Regexp(t, `node-r\s+\S+\s+v1\.2\.3\s+7/10\s+1h30m0s\s+1\s+mail`, out)
	code, out, errOut = cli(t, "nodes", "--store", store, "--within", "1000h", "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"version": "v1.2.3"`)
	assert.Contains(t, out, `"open_breakers": 1`)

	code, out, errOut = cli(t, "recurring", "list", "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "nightly")
	assert.Contains(t, out, "0 3 * * *")
	code, out, _ = cli(t, "recurring", "pause", "--store", store, "nightly")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "schedule nightly paused")
	code, out, _ = cli(t, "recurring", "list", "--store", store, "--json")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"paused": true`)
	code, _, _ = cli(t, "recurring", "resume", "--store", store, "nightly")
	require.Equal(t, 0, code)
	code, out, errOut = cli(t, "recurring", "trigger", "--store", store, "nightly")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "schedule nightly fired: job ")
	code, _, errOut = cli(t, "recurring", "trigger", "--store", store, "no-such")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no-such")
}

// An unreachable store makes the command exit non-zero, naming it.
func TestOpsUnreachableStore(t *testing.T) {
	code, _, errOut := cli(t, "stats", "--store", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "127.0.0.1:1", "the message names the store")
	code, _, errOut = cli(t, "jobs", "list")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--store is required")
}

// ratchet archive moves the finished jobs; jobs list --archived still
// lists them, and jobs show reads one from the archive.
func TestArchiveCommand(t *testing.T) {
	db, failed, pending := opsStore(t)
	store := "sqlite:" + db
	code, out, errOut := cli(t, "archive", "--store", store, "--older-than", "0s", "--batch", "3")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "4 jobs archived", "the four FAILED jobs; the PENDING ones stay")
	code, out, _ = cli(t, "jobs", "list", "--store", store)
	require.Equal(t, 0, code)
	assert.NotContains(t, out, failed[0].String())
	assert.Contains(t, out, pending[0].String())
	code, out, _ = cli(t, "jobs", "list", "--store", store, "--archived", "--status", "FAILED")
	require.Equal(t, 0, code)
	for _, id := range failed {
		assert.Contains(t, out, id.String())
	}
	code, out, errOut = cli(t, "jobs", "show", "--store", store, failed[1].String())
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "email.bounce")
	code, out, _ = cli(t, "archive", "--store", store, "--older-than", "0s")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "0 jobs archived")
}

// ratchet jobs delete deletes finished jobs, by id or by filter, and skips
// the others.
func TestDeleteCommand(t *testing.T) {
	db, failed, pending := opsStore(t)
	store := "sqlite:" + db
	code, out, errOut := cli(t, "jobs", "delete", "--store", store, "--task", "email.bounce", "--dry-run")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "4 jobs match")
	assert.Contains(t, out, "nothing changed (--dry-run)")
	code, out, errOut = cli(t, "jobs", "delete", "--store", store, failed[0].String(), pending[0].String())
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1 changed, 1 skipped", "the PENDING job is not deleted")
	assert.Contains(t, out, "it is PENDING; delete applies to SUCCEEDED, FAILED, CANCELLED, SKIPPED jobs")
	code, out, errOut = cli(t, "jobs", "delete", "--store", store, "--status", "FAILED", "--json", "--yes")
	require.Equal(t, 0, code, errOut)
	var res bulkView
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, bulkView{Action: "delete", Matching: 3, Changed: 3, Skipped: []skippedView{}}, res)
	code, out, _ = cli(t, "jobs", "list", "--store", store, "--json")
	require.Equal(t, 0, code)
	var page struct {
		Jobs []jobjson.Job `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	assert.Len(t, page.Jobs, 3, "the three PENDING jobs are left")
	code, _, errOut = cli(t, "jobs", "show", "--store", store, failed[1].String())
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "not found")
}

// On a terminal, jobs list shows short ids, which every command takes
// back; a prefix that names two jobs, or none, is an error naming it.
func TestShortIDs(t *testing.T) {
	db, failed, _ := opsStore(t)
	store := "sqlite:" + db
	defer func(w func(io.Writer) int) { termWidth = w }(termWidth)
	termWidth = func(io.Writer) int { return 100 }
	code, out, errOut := cli(t, "jobs", "list", "--store", store, "--task", "email.bounce")
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, failed[0].String(), "short ids on a terminal")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 100, "the table fits the terminal: %q", line)
	}
	short := strings.Fields(strings.Split(out, "\n")[1])[0]
	require.True(t, strings.HasPrefix(failed[0].String(), short), "%q is the start of the first job's id", short)
	code, out, errOut = cli(t, "jobs", "show", short, "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, failed[0].String(), "the short id names the job")

	common := failed[0].String()[:8] // the ids' shared millisecond prefix
	code, _, errOut = cli(t, "jobs", "show", common, "--store", store)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "is ambiguous")
	code, _, errOut = cli(t, "jobs", "show", "ffffffff-ffff", "--store", store)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "job ffffffff-ffff not found")
	code, _, errOut = cli(t, "jobs", "show", "xyz", "--store", store)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "a prefix of one of at least 8 characters")

	termWidth = func(io.Writer) int { return 0 }
	code, out, _ = cli(t, "jobs", "list", "--store", store, "--task", "email.bounce")
	require.Equal(t, 0, code)
	assert.Contains(t, out, failed[0].String(), "whole ids off a terminal, for scripts")
}
