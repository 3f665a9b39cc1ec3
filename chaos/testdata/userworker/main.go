// Command userworker is a worker binary of an application's own, for the
// chaos package's tests: two tasks of its own (orders.charge, orders.ship)
// and a workload that submits them (Workload), for --submit.
package main

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/ratchet-go/ratchet/chaos"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// Order is the arguments of both tasks.
type Order struct {
	ID     int `json:"id"`
	Millis int `json:"millis"`
}

func work(ctx context.Context, o Order) error {
	t := time.NewTimer(time.Duration(o.Millis) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var (
	charge = ratchet.NewVoidTask("orders.charge", work)
	ship   = ratchet.NewVoidTask("orders.ship", work)
)

// Workload submits 40 charges over the window, each fifth one as a
// workflow charge → ship.
func Workload(ctx context.Context, c *ratchet.Client, rng *rand.Rand, window time.Duration) error {
	const n = 40
	began := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := range n {
		timer.Reset(time.Until(began.Add(window * time.Duration(i) / n)))
		select {
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		o := Order{ID: i, Millis: 20 + rng.IntN(200)}
		if i%5 == 4 {
			wf := ratchet.NewWorkflow()
			wf.Add(charge.With(o)).Then(ship.With(o))
			if _, err := c.SubmitWorkflow(ctx, wf); err != nil {
				return err
			}
			continue
		}
		if _, err := charge.Submit(ctx, c, o); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	chaos.WorkerMainWith(chaos.WithTasks(charge, ship), chaos.WithWorkload(Workload))
}
