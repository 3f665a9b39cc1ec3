package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestThrottleWindow(t *testing.T) {
	assert.Equal(t, time.Duration(0), window(4))
	assert.Equal(t, time.Second, window(5))
	assert.Equal(t, 2*time.Second, window(6))
	assert.Equal(t, 256*time.Second, window(13))
	assert.Equal(t, throttleCap, window(14), "capped")
	assert.Equal(t, throttleCap, window(1000), "no overflow")
}

// The throttle's memory is bounded: past throttleEntries it forgets the
// stale entries, then the oldest, never a locked-out one that is newer.
func TestThrottleBounded(t *testing.T) {
	th := newThrottle()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range throttleAfter {
		th.attempt(t0, "addr victim-guesser")
	}
	now := t0.Add(throttleForget / 2)
	for i := range 2 * throttleEntries {
		th.attempt(now.Add(time.Duration(i)*time.Millisecond), fmt.Sprint("addr flood-", i))
	}
	assert.LessOrEqual(t, len(th.m), throttleEntries)
	_, ok := th.m["addr victim-guesser"]
	assert.False(t, ok, "the oldest went first when nothing was stale")

	// Stale entries go first.
	th = newThrottle()
	for i := range throttleEntries {
		th.attempt(t0, fmt.Sprint("addr old-", i))
	}
	later := t0.Add(throttleForget + time.Minute)
	for i := range throttleAfter {
		wait, _, fails := th.attempt(later, "addr guesser")
		assert.Zero(t, wait)
		assert.Equal(t, i+1, fails)
	}
	assert.Len(t, th.m, 1, "every stale entry forgotten at once")
	wait, first, _ := th.attempt(later, "addr guesser")
	assert.Equal(t, time.Second, wait)
	assert.True(t, first)
	_, first, _ = th.attempt(later, "addr guesser")
	assert.False(t, first, "only the first refusal of a lockout")
	assert.Equal(t, throttleAfter, th.m["addr guesser"].fails, "a refusal is no failure")

	// Failures long ago are no longer in a row.
	_, _, fails := th.attempt(later.Add(throttleForget+time.Minute), "addr guesser")
	assert.Equal(t, 1, fails)
}
