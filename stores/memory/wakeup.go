package memory

import (
	"context"
	"maps"
	"slices"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.WakeupListener = (*Store)(nil)

// ListenWakeups implements spi.WakeupListener: every engine on the store
// hears of the jobs that become PENDING through another (an insert names
// its spi.InsertOptions.Source; a release, a recovery, a retry, a signal
// or a finished parent names none), one wakeup per store call, with the
// highest priority among them; and, after a call that cancelled RUNNING
// jobs, a wakeup with CheckClaims. fn runs after the call's write, in the
// caller's goroutine, and must not block.
func (s *Store) ListenWakeups(ctx context.Context, fn func(spi.WakeupHint)) error {
	if err := s.lock(); err != nil {
		return err
	}
	id := s.nextListener
	s.nextListener++
	s.listeners[id] = fn
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	delete(s.listeners, id)
	s.mu.Unlock()
	return ctx.Err()
}

// owe records, with s.mu held, that job j became PENDING: the call owes
// its listeners a wakeup.
func (s *Store) owe(j *spi.Job) { s.oweAt(j.Priority) }

// oweAt records, with s.mu held, that jobs of priority p became PENDING.
func (s *Store) oweAt(p spi.Priority) {
	if len(s.listeners) == 0 {
		return
	}
	if !s.owed || p > s.hint.Priority {
		s.hint.Priority = p
	}
	s.owed = true
}

// unlock releases s.mu, then tells the listeners of what the call made
// PENDING.
func (s *Store) unlock() {
	if !s.owed && !s.checkOwed {
		s.mu.Unlock()
		return
	}
	var hints []spi.WakeupHint
	if s.owed {
		hints = append(hints, s.hint)
	}
	if s.checkOwed {
		hints = append(hints, spi.WakeupHint{CheckClaims: true})
	}
	s.owed, s.checkOwed, s.hint = false, false, spi.WakeupHint{}
	fns := slices.Collect(maps.Values(s.listeners))
	s.mu.Unlock()
	for _, h := range hints {
		for _, fn := range fns {
			fn(h)
		}
	}
}
