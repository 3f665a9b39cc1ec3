package tck

import (
	"context"
	"slices"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Timing of the wakeup case. A listener may start listening some time after
// ListenWakeups was called, and the contract allows wakeups to be lost
// meanwhile, so the case inserts again whenever none arrived within a
// growing wait, until wakeupDeadline.
const (
	wakeupFirstWait = 50 * time.Millisecond
	wakeupMaxWait   = time.Second
	wakeupDeadline  = 20 * time.Second
)

// awaitWakeup inserts jobs from source (spi.InsertOptions.Source) until the
// listener delivers a wakeup naming source. Wakeups naming an earlier
// source (late deliveries of earlier inserts) are ignored; any other source
// fails the case.
func (f *fixture) awaitWakeup(hints <-chan spi.WakeupHint, done <-chan error, source string, earlier ...string) {
	f.t.Helper()
	deadline := time.NewTimer(wakeupDeadline)
	defer deadline.Stop()
	wait := wakeupFirstWait
	for inserts := 1; ; inserts++ {
		_, err := f.s.InsertJobs(f.ctx, []*spi.Job{f.newJob(withPriority(spi.PriorityHigh))}, spi.InsertOptions{Source: source})
		require.NoError(f.t, err, "InsertJobs with spi.InsertOptions{Source: %q}", source)
		retry := time.NewTimer(wait)
	receive:
		for {
			select {
			case h := <-hints:
				switch {
				case h.Source == source:
					retry.Stop()
					f.t.Logf("wakeup from %q after %d insert(s): %+v", source, inserts, h)
					return
				case slices.Contains(earlier, h.Source):
					continue
				default:
					retry.Stop()
					f.t.Fatalf("wakeup %+v names Source %q; the only write since %v was made with spi.InsertOptions{Source: %q}",
						h, h.Source, earlier, source)
				}
			case err := <-done:
				retry.Stop()
				f.t.Fatalf("ListenWakeups returned before its context ended: %v", err)
			case <-retry.C:
				break receive
			case <-deadline.C:
				retry.Stop()
				f.t.Fatalf("no wakeup with Source %q arrived within %s (%d inserts made with that Source)", source, wakeupDeadline, inserts)
			}
		}
		wait = min(2*wait, wakeupMaxWait)
	}
}

// listen runs ListenWakeups on wl until ctx ends: the wakeups come on
// hints (up to 1,024 held), its return on done.
func listen(ctx context.Context, wl spi.WakeupListener) (hints <-chan spi.WakeupHint, done <-chan error) {
	h, d := make(chan spi.WakeupHint, 1024), make(chan error, 1)
	go func() {
		d <- wl.ListenWakeups(ctx, func(w spi.WakeupHint) {
			select {
			case h <- w:
			default:
			}
		})
	}()
	return h, d
}

func wakeupCases() []testCase {
	return []testCase{
		{"Source", func(t tb, f *fixture) {
			// Inserts made with spi.InsertOptions{Source: node} reach a
			// listener (on another handle, with Harness.Reopen) as wakeups
			// whose Source is node.
			wl := capability[spi.WakeupListener](f, "spi.WakeupListener")
			if o := f.reopen(); o != nil {
				wl = handleAs[spi.WakeupListener](f, o, "spi.WakeupListener")
				t.Logf("listening on the handle from Harness.Reopen")
			} else {
				t.Logf("Harness.Reopen is nil: listening on the store that inserts")
			}
			ctx, cancel := context.WithCancel(f.ctx)
			defer cancel()
			hints, done := listen(ctx, wl)
			f.awaitWakeup(hints, done, "node-a")
			f.awaitWakeup(hints, done, "node-b", "node-a")
			cancel()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, context.Canceled, "ListenWakeups returns its context's error")
			case <-time.After(10 * time.Second):
				t.Errorf("ListenWakeups did not return within 10 s after its context ended")
			}
		}},
		checkClaimsWakeupCase(),
	}
}
