package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// logOf reads the whole log of job id through the client, a line per
// entry rendered "run N LEVEL message".
func logOf(t *testing.T, r *rig, id [16]byte) []string {
	t.Helper()
	var out []string
	var cur ratchet.LogCursor
	for {
		lines, err := r.client.JobLogs(context.Background(), id, cur, 7)
		require.NoError(t, err)
		if len(lines) == 0 {
			return out
		}
		for _, l := range lines {
			out = append(out, fmt.Sprintf("run %d %s %s", l.Run, l.Level, l.Message))
		}
		cur = lines[len(lines)-1].After()
	}
}

// TestJobLogsKeepWhatTheBodyLogs checks that what a body logs through its
// JobContext's logger is kept per job and run, with its attributes and
// groups, the engine's own retry line, secrets masked, and lines below the
// level left out.
func TestJobLogsKeepWhatTheBodyLogs(t *testing.T) {
	// The second run waits until the test has seen the first one's retry
	// event (see TestJobStateResumesAcrossRuns).
	proceed := make(chan struct{})
	task := ratchet.NewVoidTask("logged", func(ctx context.Context, n int) error {
		if jc, _ := ratchet.JobFromContext(ctx); jc.Run > 1 {
			<-proceed
		}
		jc, _ := ratchet.JobFromContext(ctx)
		jc.Logger.Debug("not kept at the default level")
		jc.Logger.Info("charging", "amount", n, "card", "4242 4242")
		jc.Logger.WithGroup("db").With("table", "orders").Warn("slow", "ms", 250)
		if jc.Run == 1 {
			jc.Logger.Error("gateway refused", "detail", "password=hunter2")
			return errors.New("declined")
		}
		jc.Logger.Info("done")
		return nil
	}, ratchet.WithBackoff(ratchet.BackoffNone, 0))
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(context.Background(), r.client, 7)
	require.NoError(t, err)
	require.Equal(t, engine.EventRetrying, r.next(id).Kind)
	close(proceed)
	r.advanceTo(r.clock.Now())
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)

	got := logOf(t, r, id)
	want := []string{
		`run 1 INFO charging amount=7 card="4242 4242"`,
		`run 1 WARN slow db.table=orders db.ms=250`,
		`run 1 ERROR gateway refused detail=password=***`,
		`run 1 INFO job failed; retrying err=declined retry_at=` + r.clock.Now().UTC().Format("2006-01-02 15:04:05 +0000 UTC"),
		`run 2 INFO charging amount=7 card="4242 4242"`,
		`run 2 WARN slow db.table=orders db.ms=250`,
		`run 2 INFO done`,
	}
	require.Len(t, got, len(want), "%q", got)
	for i := range want {
		if i == 2 {
			assert.Contains(t, got[i], "password=***", "the sanitizer masks secrets")
			assert.NotContains(t, got[i], "hunter2")
			continue
		}
		if i == 3 {
			assert.True(t, strings.HasPrefix(got[i], "run 1 INFO job failed; retrying err=declined"), got[i])
			continue
		}
		assert.Equal(t, want[i], got[i])
	}
}

// TestJobLogsBoundedPerJob checks the bound and its marker, and that lines
// of a running job are written before it ends.
func TestJobLogsBoundedPerJob(t *testing.T) {
	halfway, release := make(chan struct{}), make(chan struct{})
	task := ratchet.NewVoidTask("chatty", func(ctx context.Context, n int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		for i := range n {
			jc.Logger.Info("line", "i", i)
			if i == 149 {
				close(halfway)
				<-release
			}
		}
		return nil
	})
	r := start(t, engine.Options{JobLogs: engine.JobLogOptions{MaxLines: 200}}, task)
	id, err := task.Submit(context.Background(), r.client, 1000)
	require.NoError(t, err)
	<-halfway
	require.Eventually(t, func() bool {
		lines, err := r.client.JobLogs(context.Background(), id, ratchet.LogCursor{}, 1000)
		return err == nil && len(lines) == 100
	}, 10*time.Second, time.Millisecond, "the first 100 lines are written while the job still runs")
	close(release)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	got := logOf(t, r, id)
	require.Len(t, got, 201, "a job keeps MaxLines lines and a marker")
	assert.Equal(t, "run 1 INFO line i=199", got[199])
	assert.Contains(t, got[200], "log truncated", "the last line says the log was truncated")
}

// TestJobLogsOff checks that Disabled keeps nothing, and that a custom
// JobLoggerFactory gets the lines while they are still kept.
func TestJobLogsOff(t *testing.T) {
	var seen strings.Builder
	mine := ratchet.JobLoggerFunc(func(c ratchet.JobLoggerContext) *slog.Logger {
		return slog.New(slog.NewTextHandler(&lockedWriter{w: &seen}, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}})).With("mine", c.TaskName)
	})
	task := ratchet.NewVoidTask("quiet", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		jc.Logger.Info("hello")
		return nil
	})
	for _, off := range []bool{false, true} {
		r := start(t, engine.Options{JobLogs: engine.JobLogOptions{Disabled: off}, JobLoggers: mine}, task)
		id, err := task.Submit(context.Background(), r.client, 1)
		require.NoError(t, err)
		require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
		if off {
			assert.Empty(t, logOf(t, r, id), "Disabled keeps no lines")
		} else {
			assert.Equal(t, []string{"run 1 INFO hello"}, logOf(t, r, id))
		}
	}
	assert.Equal(t, 2, strings.Count(seen.String(), `level=INFO msg=hello mine=quiet`), "the factory's logger got each line: %s", seen.String())
}

// TestJobLogsUnsupported checks the client's error on a store without
// job logs.
func TestJobLogsUnsupported(t *testing.T) {
	c, err := ratchet.NewClient(struct{ spi.Store }{memory.New()}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = c.JobLogs(context.Background(), c.NewJobID(), ratchet.LogCursor{}, 10)
	assert.ErrorIs(t, err, ratchet.ErrUnsupported)
}

// lockedWriter is a writer safe for concurrent use.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// With codecs, every log line is sealed (SurfaceLog) before it is stored,
// and JobLogs opens it; a line that does not open reads as such, the
// others still read.
func TestJobLogsAreSealed(t *testing.T) {
	task := ratchet.NewVoidTask("logged", func(ctx context.Context, n int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		jc.Logger.Info("charging", "card", "4242 4242")
		jc.Logger.Info("done")
		return nil
	})
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{&envelope{tag: "L:", key: 6}}}}, task)
	id, err := task.Submit(context.Background(), r.client, 7)
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Equal(t, []string{`run 1 INFO charging card="4242 4242"`, `run 1 INFO done`}, logOf(t, r, id))

	ls := spi.CapabilitiesOf(r.store).Logs
	raw, err := ls.JobLogs(context.Background(), id, ratchet.LogCursor{}, 10)
	require.NoError(t, err)
	require.Len(t, raw, 2)
	for _, l := range raw {
		assert.True(t, strings.HasPrefix(l.Message, "\x1bratchet-sealed:"), "stored sealed: %q", l.Message)
		assert.NotContains(t, l.Message, "4242")
	}
	other, err := ratchet.NewClient(r.store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{&envelope{tag: "X:", key: 1}}})
	require.NoError(t, err)
	lines, err := other.JobLogs(context.Background(), id, ratchet.LogCursor{}, 10)
	require.NoError(t, err)
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0].Message, "[sealed log line that does not open: ")
	assert.NotContains(t, lines[0].Message, "4242")
}
