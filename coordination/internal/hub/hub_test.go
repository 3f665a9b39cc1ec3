package hub

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestEncodeDecode(t *testing.T) {
	for _, w := range []spi.WakeupHint{
		{Priority: spi.PriorityLowest, Source: ""},
		{Priority: spi.PriorityCritical, Source: "node-a"},
		{Priority: spi.PriorityNormal, Source: "a:b c/ü"},
		{Source: "node-a", CheckClaims: true},
		{Source: "client-a;b", Watching: []uuid.UUID{uuid.New(), uuid.New()}},
		{Finished: []uuid.UUID{uuid.New()}},
	} {
		got, err := Decode(Encode(w))
		require.NoError(t, err)
		assert.Equal(t, w, got)
	}
	assert.Equal(t, "4:n", string(Encode(spi.WakeupHint{Priority: 9, Source: "n"})), "clamped")
	for _, bad := range []string{"", "2", "5:n", "x:n", "2-n", "w:", "f:;n", "w:1234;n", "f:" + uuid.NewString() + ",x;n"} {
		_, err := Decode([]byte(bad))
		assert.ErrorIs(t, err, ErrMalformed, "%q", bad)
	}
}

func TestMailboxCoalescesBySource(t *testing.T) {
	m := newMailbox()
	m.put(spi.WakeupHint{Priority: 1, Source: "a"})
	m.put(spi.WakeupHint{Priority: 3, Source: "b"})
	m.put(spi.WakeupHint{Priority: 2, Source: "a"})
	m.put(spi.WakeupHint{Priority: 0, Source: "b"})
	got, ok := m.take(context.Background())
	require.True(t, ok)
	assert.Equal(t, []spi.WakeupHint{{Priority: 2, Source: "a"}, {Priority: 3, Source: "b"}}, got)

	for i := range MaxPendingSources + 10 {
		m.put(spi.WakeupHint{Source: string(rune('A' + i))})
	}
	got, _ = m.take(context.Background())
	assert.Len(t, got, MaxPendingSources, "the rest are dropped, never waited for")

	// Claims notices coalesce into one, first in the batch.
	m.put(spi.WakeupHint{Priority: 1, Source: "a"})
	m.put(spi.WakeupHint{Source: "x", CheckClaims: true})
	m.put(spi.WakeupHint{Source: "y", CheckClaims: true})
	got, _ = m.take(context.Background())
	assert.Equal(t, []spi.WakeupHint{{Source: "x", CheckClaims: true}, {Priority: 1, Source: "a"}}, got)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ok = m.take(ctx)
	assert.False(t, ok)
}

// records keeps log records.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func TestPublishFailuresLoggedOncePerOutage(t *testing.T) {
	// The fake transport answers each publish with the error the test
	// sends, so that the test knows when each publish happened.
	answers := make(chan error)
	published := make(chan []byte, 100)
	lines := &records{}
	h := New(func(ctx context.Context, msg []byte) error {
		published <- msg
		select {
		case err := <-answers:
			return err
		case <-ctx.Done(): // Close
			return ctx.Err()
		}
	}, Options{Name: "fake", Logger: slog.New(lines)})
	defer h.Close()

	down := errors.New("connection refused")
	for _, err := range []error{down, down, down, nil, down, nil} {
		h.Notify(spi.PriorityHigh, "n")
		assert.Equal(t, "3:n", string(<-published))
		answers <- err
	}
	h.Notify(spi.PriorityHigh, "n") // the publisher has handled the last answer once it takes this one
	<-published
	h.Close()
	lines.mu.Lock()
	defer lines.mu.Unlock()
	assert.Equal(t, []string{
		"ratchet: cannot publish cluster wakeups; other nodes find new work by polling until this recovers",
		"ratchet: cluster wakeups published again",
		"ratchet: cannot publish cluster wakeups; other nodes find new work by polling until this recovers",
		"ratchet: cluster wakeups published again",
	}, lines.msgs)
}

func TestListenersGetWakeupsAndCloseIsIdempotent(t *testing.T) {
	h := New(func(context.Context, []byte) error { return nil }, Options{})
	got := make(chan spi.WakeupHint, 1)
	h.Register(func(w spi.WakeupHint) { got <- w })
	h.Deliver([]byte("4:other"))
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityCritical, Source: "other"}, <-got)
	h.Deliver([]byte("garbage")) // ignored
	h.Close()
	h.Close()
	h.Notify(spi.PriorityNormal, "n") // no-op after Close
}

// WaitJob's notices are kept in order and not coalesced, up to
// MaxPendingNotices; a wakeup of the same source still coalesces.
func TestMailboxKeepsNotices(t *testing.T) {
	m := newMailbox()
	a, b := []uuid.UUID{uuid.New()}, []uuid.UUID{uuid.New()}
	m.put(spi.WakeupHint{Source: "x", Watching: a})
	m.put(spi.WakeupHint{Priority: 1, Source: "x"})
	m.put(spi.WakeupHint{Source: "x", Watching: a})
	m.put(spi.WakeupHint{Source: "y", Finished: b})
	got, ok := m.take(context.Background())
	require.True(t, ok)
	assert.Equal(t, []spi.WakeupHint{{Source: "x", Watching: a}, {Source: "x", Watching: a}, {Source: "y", Finished: b},
		{Priority: 1, Source: "x"}}, got)
	for range MaxPendingNotices + 5 {
		m.put(spi.WakeupHint{Finished: b})
	}
	got, _ = m.take(context.Background())
	assert.Len(t, got, MaxPendingNotices, "the newest past the bound are dropped")
}
