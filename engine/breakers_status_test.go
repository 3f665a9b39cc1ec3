package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Engine.Breakers lists the poller breaker first, then the breakers of
// the protected services called so far, sorted by service, at the
// engine's clock; with breaking off it lists none.
func TestEngineBreakers(t *testing.T) {
	charge := ratchet.NewVoidTask("charge", func(context.Context, int) error { return errGatewayDown },
		ratchet.WithMaxRetries(5), ratchet.WithBackoff(ratchet.BackoffFixed, time.Hour)).ProtectedBy("payments", spi.ErrorFilter{})
	mail := ratchet.NewVoidTask("mail", func(context.Context, int) error { return nil }).ProtectedBy("email", spi.ErrorFilter{})
	cfg := spi.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1, WaitDuration: time.Minute}
	r := start(t, engine.Options{NodeID: "node-a", Breakers: engine.BreakerOptions{Config: cfg}}, charge, mail)

	type row struct {
		Service string
		Poller  bool
		State   breaker.State
		OpenFor time.Duration
	}
	rows := func() []row {
		var out []row
		for _, s := range r.eng.Breakers() {
			out = append(out, row{s.Service, s.Poller, s.State, s.OpenFor})
		}
		return out
	}
	assert.Equal(t, []row{{"node-a", true, breaker.Closed, 0}}, rows(), "the poller's breaker only: no service called yet")

	ctx := context.Background()
	id, err := charge.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	require.Equal(t, engine.EventRetrying, r.next(id).Kind)
	id, err = mail.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)

	assert.Equal(t, []row{
		{"node-a", true, breaker.Closed, 0},
		{"email", false, breaker.Closed, 0},
		{"payments", false, breaker.Open, time.Minute},
	}, rows())
	got := r.eng.Breakers()
	assert.Equal(t, time.Minute, got[2].Config.WaitDuration, "the configuration, defaults applied")
	assert.Equal(t, spi.DefaultCircuitBreakerConfig().FailureRateThreshold, got[2].Config.FailureRateThreshold)

	r.clock.Advance(20 * time.Second)
	assert.Equal(t, 40*time.Second, r.eng.Breakers()[2].OpenFor, "at the engine's clock")
	r.clock.Advance(40 * time.Second)
	assert.Equal(t, breaker.HalfOpen, r.eng.Breakers()[2].State, "past its wait")

	off := start(t, engine.Options{Breakers: engine.BreakerOptions{Disabled: true}}, charge, mail)
	assert.Empty(t, off.eng.Breakers())
}
