package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A chain: each step runs once the one before it has succeeded (Then).
// The whole workflow is written in one atomic step; a step that failed
// for good would cancel the rest of the chain.
func Example_workflowChain() {
	ctx := context.Background()
	step := func(name string) *ratchet.Task[string, string] {
		return ratchet.NewTask(name, func(ctx context.Context, order string) (string, error) {
			fmt.Println("running", name, "for", order)
			return name + " done", nil
		})
	}
	reserve, charge, ship := step("order.reserve"), step("order.charge"), step("order.ship")
	eng := startWorkflowNode(nil, reserve, charge, ship)
	defer eng.Stop(ctx)
	client := eng.Client()

	wf := ratchet.NewWorkflow(ratchet.WithParam("tenant", "acme")) // defaults of every step
	shipped := wf.Add(reserve.With("A-17")).
		Then(charge.With("A-17")).
		Then(ship.With("A-17"))
	id, err := client.SubmitWorkflow(ctx, wf) // every step or none
	if err != nil {
		log.Fatal(err)
	}

	st := waitForWorkflow(ctx, client, id)
	fmt.Println(st.Counts)
	res, _ := ship.Result(client, st.Job(shipped))
	fmt.Println(res)
	// Output:
	// running order.reserve for A-17
	// running order.charge for A-17
	// running order.ship for A-17
	// map[SUCCEEDED:3]
	// order.ship done
}

// A DAG: a step fans out to several that run in parallel, and a join
// waits for all of them (After with several parents). A body reads its
// parents, with their results, in the order After declared them.
func Example_workflowDAG() {
	ctx := context.Background()
	upload := ratchet.NewVoidTask("image.upload", func(ctx context.Context, name string) error { return nil })
	resize := ratchet.NewTask("image.resize", func(ctx context.Context, width int) (string, error) {
		return fmt.Sprintf("%dpx", width), nil
	})
	publish := ratchet.NewTask("image.publish", func(ctx context.Context, name string) (string, error) {
		jc, _ := ratchet.JobFromContext(ctx)
		parents, err := jc.Parents(ctx)
		if err != nil {
			return "", err
		}
		var sizes []string
		for _, p := range parents {
			size, err := ratchet.ParentResult[string](p)
			if err != nil {
				return "", err
			}
			sizes = append(sizes, size)
		}
		return name + " in " + strings.Join(sizes, ", "), nil
	})
	eng := startWorkflowNode(nil, upload, resize, publish)
	defer eng.Stop(ctx)
	client := eng.Client()

	wf := ratchet.NewWorkflow()
	up := wf.Add(upload.With("cat.png"))
	small := up.Then(resize.With(160)) // the three resizes run in parallel
	medium := up.Then(resize.With(640))
	large := up.Then(resize.With(1280))
	published := wf.Add(publish.With("cat.png")).After(small, medium, large) // the join
	id, err := client.SubmitWorkflow(ctx, wf)
	if err != nil {
		log.Fatal(err)
	}

	st := waitForWorkflow(ctx, client, id)
	printSteps(st, up, small, medium, large, published)
	res, _ := publish.Result(client, st.Job(published))
	fmt.Println(res)
	// Output:
	// image.upload SUCCEEDED
	// image.resize SUCCEEDED
	// image.resize SUCCEEDED
	// image.resize SUCCEEDED
	// image.publish SUCCEEDED
	// cat.png in 160px, 640px, 1280px
}

// A branch: a condition decides over a parent's result whether a child
// runs (When); a child whose condition does not hold ends SKIPPED without
// running. Conditions are registered with the engine by name, like tasks:
// a stored workflow names its conditions, never code. A join after both
// sides of the branch allows the skip (RunIfSkipped).
func Example_workflowBranch() {
	ctx := context.Background()
	over := ratchet.NewCondition("cents.over", func(_ context.Context, cents, limit int) (bool, error) {
		return cents > limit, nil
	})
	atMost := ratchet.NewCondition("cents.at-most", func(_ context.Context, cents, limit int) (bool, error) {
		return cents <= limit, nil
	})
	price := ratchet.NewTask("order.price", func(ctx context.Context, order string) (int, error) { return 25_000, nil })
	review := ratchet.NewVoidTask("order.review", func(ctx context.Context, order string) error { return nil })
	approve := ratchet.NewVoidTask("order.approve", func(ctx context.Context, order string) error { return nil })
	ship := ratchet.NewVoidTask("order.ship", func(ctx context.Context, order string) error { return nil })
	eng := startWorkflowNode([]ratchet.ConditionDefinition{over, atMost}, price, review, approve, ship)
	defer eng.Stop(ctx)
	client := eng.Client()

	wf := ratchet.NewWorkflow()
	priced := wf.Add(price.With("A-17"))
	reviewed := wf.Add(review.With("A-17")).AfterWith(priced, ratchet.When(over.With(10_000)))
	approved := wf.Add(approve.With("A-17")).AfterWith(priced, ratchet.When(atMost.With(10_000)))
	shipped := wf.Add(ship.With("A-17")).
		AfterWith(reviewed, ratchet.RunIfSkipped()).
		AfterWith(approved, ratchet.RunIfSkipped())
	id, err := client.SubmitWorkflow(ctx, wf)
	if err != nil {
		log.Fatal(err)
	}

	st := waitForWorkflow(ctx, client, id)
	printSteps(st, priced, reviewed, approved, shipped)
	// Output:
	// order.price SUCCEEDED
	// order.review SUCCEEDED
	// order.approve SKIPPED
	// order.ship SUCCEEDED
}

// Callbacks: OnSuccess runs once its step has succeeded, OnFailure once it
// has failed for good (retries exhausted, DoNotRetry, or the crash budget
// spent); the other one ends SKIPPED. A callback reads the step it follows
// as its parent. A single job takes callbacks as Submit options too
// (ratchet.OnSuccess, ratchet.OnFailure).
func Example_workflowCallbacks() {
	ctx := context.Background()
	charge := ratchet.NewTask("payment.charge", func(ctx context.Context, card string) (string, error) {
		if card == "declined" {
			return "", ratchet.DoNotRetry(errors.New("card declined")) // straight to FAILED
		}
		return "charged", nil
	})
	receipt := ratchet.NewVoidTask("email.receipt", func(ctx context.Context, to string) error { return nil })
	alert := ratchet.NewTask("ops.alert", func(ctx context.Context, team string) (string, error) {
		jc, _ := ratchet.JobFromContext(ctx)
		parents, err := jc.Parents(ctx) // the step the callback follows
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("told %s: %s %s", team, parents[0].Task, parents[0].Status), nil
	})
	eng := startWorkflowNode(nil, charge, receipt, alert)
	defer eng.Stop(ctx)
	client := eng.Client()

	wf := ratchet.NewWorkflow()
	charged := wf.Add(charge.With("declined"))
	onSuccess := charged.OnSuccess(receipt.With("ada@example.com"))
	onFailure := charged.OnFailure(alert.With("billing"))
	id, err := client.SubmitWorkflow(ctx, wf)
	if err != nil {
		log.Fatal(err)
	}

	st := waitForWorkflow(ctx, client, id)
	printSteps(st, charged, onSuccess, onFailure)
	fmt.Println(st.Job(charged).LastError)
	msg, _ := alert.Result(client, st.Job(onFailure))
	fmt.Println(msg)
	// Output:
	// payment.charge FAILED
	// email.receipt SKIPPED
	// ops.alert SUCCEEDED
	// do not retry: card declined
	// told billing: payment.charge FAILED
}

// Late-bound arguments: Task.ResolveArgs computes a job's typed arguments
// from its parents' results just before each run of it, so a step can
// take what earlier steps produced, unknown when the workflow was
// submitted. The stored arguments stay as submitted.
func Example_workflowLateBoundArgs() {
	ctx := context.Background()
	type Quote struct {
		Supplier string
		Cents    int
	}
	type Order struct {
		Item     string
		Supplier string // filled in from the quotes
		Cents    int
	}
	prices := map[string]int{"acme": 1250, "globex": 1150}
	quote := ratchet.NewTask("supplier.quote", func(ctx context.Context, supplier string) (Quote, error) {
		return Quote{Supplier: supplier, Cents: prices[supplier]}, nil
	})
	place := ratchet.NewTask("order.place", func(ctx context.Context, o Order) (string, error) {
		return fmt.Sprintf("%s from %s at %d cents", o.Item, o.Supplier, o.Cents), nil
	}).ResolveArgs(func(ctx context.Context, o Order, parents []ratchet.Parent) (Order, error) {
		for _, p := range parents { // the cheapest quote wins
			q, err := ratchet.ParentResult[Quote](p)
			if err != nil {
				return o, err
			}
			if o.Supplier == "" || q.Cents < o.Cents {
				o.Supplier, o.Cents = q.Supplier, q.Cents
			}
		}
		return o, nil
	})
	eng := startWorkflowNode(nil, quote, place)
	defer eng.Stop(ctx)
	client := eng.Client()

	wf := ratchet.NewWorkflow()
	acme := wf.Add(quote.With("acme"))
	globex := wf.Add(quote.With("globex"))
	placed := wf.Add(place.With(Order{Item: "widgets"})).After(acme, globex)
	id, err := client.SubmitWorkflow(ctx, wf)
	if err != nil {
		log.Fatal(err)
	}

	st := waitForWorkflow(ctx, client, id)
	res, _ := place.Result(client, st.Job(placed))
	fmt.Println(res)
	// Output:
	// widgets from globex at 1150 cents
}

// startWorkflowNode starts an engine on an in-memory store, with tasks and
// the workflow conditions it evaluates; the caller stops it.
func startWorkflowNode(conditions []ratchet.ConditionDefinition, tasks ...ratchet.Definition) *engine.Engine {
	eng, err := engine.New(memory.New(), engine.Options{
		Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler), Conditions: conditions},
	}, tasks...)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	return eng
}

// waitForWorkflow reads the status of workflow id until every job of it
// has finished (Done), for at most 10 seconds.
func waitForWorkflow(ctx context.Context, client *ratchet.Client, id uuid.UUID) *ratchet.WorkflowStatus {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := client.Workflow(ctx, id)
		if err != nil {
			log.Fatal(err)
		}
		if st.Done {
			return st
		}
		select {
		case <-ctx.Done():
			log.Fatalf("workflow %s has not finished: %v (%v)", id, ctx.Err(), st.Counts)
		case <-tick.C:
		}
	}
}

// printSteps prints the task and the status of each step's job.
func printSteps(st *ratchet.WorkflowStatus, steps ...*ratchet.Step) {
	for _, s := range steps {
		j := st.Job(s)
		fmt.Println(j.TaskName, j.Status)
	}
}
