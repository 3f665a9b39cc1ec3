package ratchet_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// countingHandler counts WithAttrs calls on a TextHandler.
type countingHandler struct {
	slog.Handler
	withAttrs *int
}

func (h countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	*h.withAttrs++
	return countingHandler{h.Handler.WithAttrs(as), h.withAttrs}
}

func TestDefaultJobLoggersTagLazily(t *testing.T) {
	var buf bytes.Buffer
	n := 0
	base := slog.New(countingHandler{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}), &n})
	id := uuid.New()
	l := ratchet.DefaultJobLoggers.JobLogger(ratchet.JobLoggerContext{JobID: id, TaskName: "send", Run: 2, Base: base})

	assert.Equal(t, 0, n, "a run that does not log formats no tags")
	assert.False(t, l.Enabled(t.Context(), slog.LevelDebug), "Enabled is the base handler's")
	l.Debug("dropped")
	assert.Empty(t, buf.String())

	l.Info("one", "k", "v")
	l.With("extra", 1).WithGroup("g").Info("two", "x", 2)
	l.Info("three")
	assert.Equal(t, 2, n, "the tags reach the base handler once (With's own attributes once more)")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if assert.Len(t, lines, 3) {
		tags := "job_id=" + id.String() + " task=send run=2"
		assert.Contains(t, lines[0], tags+" k=v")
		assert.Contains(t, lines[1], tags+" extra=1 g.x=2")
		assert.Contains(t, lines[2], tags)
	}
}
