package engine_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// recording is a slog.Handler that keeps every record, at every level.
type recording struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recording) Enabled(context.Context, slog.Level) bool { return true }
func (h *recording) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *recording) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recording) WithGroup(string) slog.Handler      { return h }

func (h *recording) messages(atLeast slog.Level) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		if r.Level >= atLeast {
			out = append(out, r.Message)
		}
	}
	return out
}

// A node started with default options logs one line at INFO ("ratchet
// engine started"); the routine start-up of its singleton services (the
// archiver, the log sweeper, the workflow repairer, the signal and
// start-by sweepers and the batch finisher taking their leases) is at
// DEBUG.
func TestStartLogsOneLineAtInfo(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Create: true})
	require.NoError(t, err)
	defer store.Close()
	h := &recording{}
	noop := ratchet.NewVoidTask("noop", func(context.Context, struct{}) error { return nil })
	eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(h)}}, noop)
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)
	leases := func() int {
		n := 0
		for _, m := range h.messages(slog.LevelDebug) {
			if m == "lease taken; running the singleton service" {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return leases() >= 6 }, 10*time.Second, time.Millisecond, "the six singleton services take their leases")
	assert.Equal(t, 6, leases(), "each once: the archiver, the log retention, the batch finisher, the signal and start-by sweepers, the workflow repair")
	info := h.messages(slog.LevelInfo)
	assert.Equal(t, []string{"ratchet engine started"}, info)
	assert.True(t, slices.Contains(h.messages(slog.LevelDebug), "lease taken; running the singleton service"))
}
