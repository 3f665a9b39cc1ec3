package engine_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Decision is the payload of the examples' signals.
type Decision struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`
}

// signalTask is a task whose body reports how its wait ended on done.
func signalTask(done chan<- string) *ratchet.Task[string, ratchet.Void] {
	return ratchet.NewVoidTask("refund.approve", func(ctx context.Context, order string) error {
		jc, _ := ratchet.JobFromContext(ctx)
		s, err := jc.Signal(ctx)
		if err != nil {
			return err
		}
		if !s.HasPayload() {
			done <- fmt.Sprintf("%s: %s, no decision", order, s.Outcome)
			return nil
		}
		var d Decision
		if err := s.Decode(ctx, &d); err != nil {
			return err
		}
		done <- fmt.Sprintf("%s: %s, approved=%v by %s", order, s.Outcome, d.Approved, d.By)
		return nil
	})
}

func startSignalNode(opts engine.Options, tasks ...ratchet.Definition) *engine.Engine {
	opts.Client.Logger = slog.New(slog.DiscardHandler)
	eng, err := engine.New(memory.New(), opts, tasks...)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	return eng
}

// A job that waits for a signal: AwaitSignal writes it WAITING; it runs
// once Signal delivers the signal, and reads the signal's payload.
func Example_signal() {
	ctx := context.Background()
	done := make(chan string, 1)
	approve := signalTask(done)
	eng := startSignalNode(engine.Options{}, approve)
	defer eng.Stop(ctx)
	client := eng.Client()

	id, err := approve.Submit(ctx, client, "A-17", ratchet.AwaitSignal("approval", 24*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	j, _ := client.GetJob(ctx, id)
	fmt.Println(j.Status, j.Signal.Name)

	if err := client.Signal(ctx, id, "approval", Decision{Approved: true, By: "ann"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	// Output:
	// WAITING approval
	// A-17: DELIVERED, approved=true by ann
}

// Jobs found by a key: every job waiting for the signal under the key
// wakes with one SignalByKey, each once.
func Example_signalByKey() {
	ctx := context.Background()
	done := make(chan string, 2)
	approve := signalTask(done)
	eng := startSignalNode(engine.Options{}, approve)
	defer eng.Stop(ctx)
	client := eng.Client()

	for _, order := range []string{"A-17", "A-18"} {
		if _, err := approve.Submit(ctx, client, order,
			ratchet.AwaitSignal("approval", 0), ratchet.WithSignalKey("customer-42")); err != nil {
			log.Fatal(err)
		}
	}
	n, err := client.SignalByKey(ctx, "customer-42", "approval", Decision{By: "fraud-check"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("woke", n)
	got := []string{<-done, <-done}
	if got[0] > got[1] {
		got[0], got[1] = got[1], got[0]
	}
	fmt.Println(got[0])
	fmt.Println(got[1])
	// Output:
	// woke 2
	// A-17: DELIVERED, approved=false by fraud-check
	// A-18: DELIVERED, approved=false by fraud-check
}

// A wait that times out: the engine's signal sweeper ends it TIMED_OUT at
// its deadline, and the job runs without a payload.
func Example_signalTimeout() {
	ctx := context.Background()
	done := make(chan string, 1)
	approve := signalTask(done)
	eng := startSignalNode(engine.Options{SignalSweepInterval: 10 * time.Millisecond}, approve)
	defer eng.Stop(ctx)
	client := eng.Client()

	id, err := approve.Submit(ctx, client, "A-19", ratchet.AwaitSignal("approval", 50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	err = client.Signal(ctx, id, "approval", Decision{Approved: true})
	fmt.Println("late signal refused:", err != nil)
	// Output:
	// A-19: TIMED_OUT, no decision
	// late signal refused: true
}

// A body that waits for a signal in the middle of its run: it reserves
// stock once, waits for the warehouse's confirmation without holding a
// slot, and resumes where it stopped; the reservation is not made again.
func ExampleWaitSignal() {
	ctx := context.Background()
	reserved := 0
	done := make(chan string, 1)
	ship := ratchet.NewVoidTask("order.ship", func(ctx context.Context, order string) error {
		if _, err := ratchet.RunStep(ctx, "reserve", func(context.Context) (int, error) {
			reserved++
			return reserved, nil
		}); err != nil {
			return err
		}
		sig, err := ratchet.WaitSignal(ctx, "packed", time.Hour, ratchet.WaitKey(order))
		if err != nil {
			return err // the job waits: return the error as it is
		}
		var crate string
		if err := sig.Decode(ctx, &crate); err != nil {
			return err
		}
		done <- fmt.Sprintf("%s %s in %s, reserved %d time(s)", order, sig.Outcome, crate, reserved)
		return nil
	})
	eng := startSignalNode(engine.Options{}, ship)
	defer eng.Stop(ctx)
	client := eng.Client()

	waiting, unsubscribe := eng.SubscribeWith(engine.SubscribeOptions{Kinds: []engine.EventKind{engine.EventWaiting}})
	defer unsubscribe()

	id, err := ship.Submit(ctx, client, "A-18")
	if err != nil {
		log.Fatal(err)
	}
	<-waiting // the run returned the wait: the job is WAITING, its slot free
	j, err := client.GetJob(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(j.Status, j.Signal.Name, j.Signal.Key, "attempts", j.Attempts)
	if _, err := client.SignalByKey(ctx, "A-18", "packed", "crate-4"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	// Output:
	// WAITING packed A-18 attempts 0
	// A-18 DELIVERED in crate-4, reserved 1 time(s)
}
