package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// A service whose calls keep failing opens its breaker: later calls are
// refused without running, until the wait is over and trial calls pass.
func ExampleStrategy() {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := breaker.NewStrategy(breaker.Options{
		Configs: configs{"payments": {SlidingWindowSize: 4, MinimumCalls: 4, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 1}},
		Now:     func() time.Time { return now },
		Changed: func(service string, from, to breaker.State) { fmt.Println(service, from, "->", to) },
	})
	ctx := context.Background()
	down := func(context.Context) (any, error) { return nil, errors.New("503 from the gateway") }
	for range 4 {
		_, _ = s.Execute(ctx, "payments", spi.ErrorFilter{}, down)
	}
	_, err := s.Execute(ctx, "payments", spi.ErrorFilter{}, down)
	fmt.Println(errors.Is(err, spi.ErrCircuitOpen), err)
	now = now.Add(time.Minute)
	res, _ := s.Execute(ctx, "payments", spi.ErrorFilter{}, func(context.Context) (any, error) { return "paid", nil })
	fmt.Println(res)
	// Output:
	// payments CLOSED -> OPEN
	// true circuit breaker of service "payments" is open: retry after 30s
	// payments OPEN -> HALF_OPEN
	// payments HALF_OPEN -> CLOSED
	// paid
}
