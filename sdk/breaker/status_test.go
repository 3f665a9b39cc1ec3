package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// A breaker's snapshot: its state and how long it stays open, read at a
// time of the caller's clock.
func TestBreakerStatus(t *testing.T) {
	cfg := spi.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 1}
	withDefaults, err := cfg.WithDefaults()
	require.NoError(t, err)
	cases := []struct {
		name     string
		failures int           // failed calls at t0
		at       time.Duration // the snapshot's time after t0
		poller   bool
		want     breaker.State
		openFor  time.Duration
	}{
		{name: "closed, never called", want: breaker.Closed},
		{name: "closed under the minimum", failures: 1, at: time.Hour, want: breaker.Closed},
		{name: "a poller breaker closed", poller: true, want: breaker.Closed},
		{name: "open: the whole wait ahead", failures: 2, want: breaker.Open, openFor: time.Minute},
		{name: "open: the wait counts down", failures: 2, at: 20 * time.Second, want: breaker.Open, openFor: 40 * time.Second},
		{name: "open: a nanosecond left", failures: 2, at: time.Minute - time.Nanosecond, want: breaker.Open, openFor: time.Nanosecond},
		{name: "open past its wait reads HALF_OPEN", failures: 2, at: time.Minute, want: breaker.HalfOpen},
		{name: "long past its wait", failures: 2, at: time.Hour, poller: true, want: breaker.HalfOpen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := breaker.New(cfg, nil)
			require.NoError(t, err)
			for range c.failures {
				p, ok := b.Allow(t0)
				require.True(t, ok)
				p.Done(t0, spi.CallFailed)
			}
			now := t0.Add(c.at)
			got := b.Status("payments", c.poller, now)
			assert.Equal(t, "payments", got.Service)
			assert.Equal(t, c.poller, got.Poller)
			assert.Equal(t, c.want, got.State)
			assert.Equal(t, c.openFor, got.OpenFor)
			assert.Equal(t, b.OpenFor(now), got.OpenFor, "as Breaker.OpenFor")
			assert.Equal(t, withDefaults.WaitDuration, got.Config.WaitDuration)
			assert.Equal(t, withDefaults.FailureRateThreshold, got.Config.FailureRateThreshold, "defaults applied")
			if c.failures >= 2 {
				assert.Equal(t, breaker.Open, b.Status("payments", c.poller, t0).State, "a snapshot changes nothing")
			}
		})
	}
}

// A strategy's snapshots: one per service called so far, sorted by
// service, each with its own configuration and state.
func TestStrategyStatuses(t *testing.T) {
	now := t0
	s := breaker.NewStrategy(breaker.Options{
		Configs: configs{
			"payments": {SlidingWindowSize: 1, MinimumCalls: 1, WaitDuration: time.Minute},
			"email":    {WaitDuration: 2 * time.Minute},
			"sms":      {WaitDuration: 3 * time.Minute}, // configured, never called
		},
		Now: func() time.Time { return now },
	})
	assert.Empty(t, s.Statuses(now), "no service called yet")

	ctx := context.Background()
	ok := func(context.Context) (any, error) { return nil, nil }
	failing := func(context.Context) (any, error) { return nil, errDown }
	for _, call := range []struct {
		service string
		fn      func(context.Context) (any, error)
	}{{"payments", failing}, {"email", ok}, {"audit", ok}} {
		_, _ = s.Execute(ctx, call.service, spi.ErrorFilter{}, call.fn)
	}

	cases := []struct {
		name string
		at   time.Duration
		want []breaker.State
		open time.Duration // payments' OpenFor
	}{
		{name: "payments open", want: []breaker.State{breaker.Closed, breaker.Closed, breaker.Open}, open: time.Minute},
		{name: "payments counting down", at: 45 * time.Second, want: []breaker.State{breaker.Closed, breaker.Closed, breaker.Open}, open: 15 * time.Second},
		{name: "payments past its wait", at: time.Minute, want: []breaker.State{breaker.Closed, breaker.Closed, breaker.HalfOpen}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s.Statuses(t0.Add(c.at))
			require.Len(t, got, 3)
			var services []string
			var states []breaker.State
			for _, st := range got {
				services = append(services, st.Service)
				states = append(states, st.State)
				assert.False(t, st.Poller)
			}
			assert.Equal(t, []string{"audit", "email", "payments"}, services, "sorted; sms never called")
			assert.Equal(t, c.want, states)
			assert.Equal(t, []time.Duration{0, 0, c.open}, []time.Duration{got[0].OpenFor, got[1].OpenFor, got[2].OpenFor})
			assert.Equal(t, 2*time.Minute, got[1].Config.WaitDuration, "email's own configuration")
			assert.Equal(t, spi.DefaultCircuitBreakerConfig().WaitDuration, got[0].Config.WaitDuration, "audit: the defaults")
		})
	}
}
