package ratchet_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest"
	"github.com/ratchet-go/ratchet/stores/memory"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// Invoice is the arguments of the examples' task.
type Invoice struct {
	Customer string `json:"customer"`
	Cents    int    `json:"cents"`
}

// bill is the examples' task: a stable name and a typed function.
var bill = ratchet.NewTask("invoice.bill", func(ctx context.Context, in Invoice) (string, error) {
	if in.Cents <= 0 {
		return "", ratchet.DoNotRetry(errors.New("nothing to bill")) // straight to the dead-letter queue
	}
	return fmt.Sprintf("billed %s %d cents", in.Customer, in.Cents), nil
})

// node starts a worker over store that runs tasks, and returns it with
// the events of the outcomes it writes.
func node(store spi.Store, opts engine.Options, tasks ...ratchet.Definition) (*engine.Engine, <-chan engine.Event) {
	opts.Client.Logger = slog.New(slog.DiscardHandler)
	eng, err := engine.New(store, opts, tasks...)
	if err != nil {
		log.Fatal(err)
	}
	events, _ := eng.Subscribe(0)
	if err := eng.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	return eng, events
}

// A task and a submission: a node runs the task's jobs; the client
// submits them and reads the typed result.
func ExampleNewTask() {
	ctx := context.Background()
	eng, events := node(memory.New(), engine.Options{}, bill)
	defer eng.Stop(ctx)
	client := eng.Client() // or ratchet.NewClient(store, ratchet.ClientOptions{}) in a process that only submits

	id, err := bill.Submit(ctx, client, Invoice{Customer: "acme", Cents: 1200}, ratchet.WithPriority(ratchet.PriorityHigh))
	if err != nil {
		log.Fatal(err)
	}
	<-events
	job, _ := client.GetJob(ctx, id)
	res, _ := bill.Result(client, job)
	fmt.Println(job.Status, res)
	// Output:
	// SUCCEEDED billed acme 1200 cents
}

// Waiting for a result: Wait blocks until the job has finished, on
// whichever node it ran, and decodes its result.
func ExampleTask_Wait() {
	ctx := context.Background()
	store := memory.New()
	eng, _ := node(store, engine.Options{}, bill)
	defer eng.Stop(ctx)
	client, _ := ratchet.NewClient(store, ratchet.ClientOptions{}) // a process that only submits

	id, err := bill.Submit(ctx, client, Invoice{Customer: "acme", Cents: 990})
	if err != nil {
		log.Fatal(err)
	}
	res, err := bill.Wait(ctx, client, id)
	fmt.Println(res, err)
	// Output:
	// billed acme 990 cents <nil>
}

// Reading and managing jobs: list the dead-letter queue, retry a job out
// of it, cancel a job that waits.
func ExampleClient_ListJobs() {
	ctx := context.Background()
	eng, events := node(memory.New(), engine.Options{}, bill)
	defer eng.Stop(ctx)
	client := eng.Client()

	zero, _ := bill.Submit(ctx, client, Invoice{Customer: "acme"})
	later, _ := bill.Submit(ctx, client, Invoice{Customer: "bob", Cents: 5}, ratchet.WithDelay(time.Hour))
	<-events

	dlq, err := client.ListJobs(ctx, ratchet.ListOptions{Status: ratchet.StatusFailed})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range dlq.Jobs {
		fmt.Println("dead letter:", j.ID == zero, j.LastError)
	}
	n, _, _ := client.CountJobs(ctx, ratchet.ListOptions{Status: ratchet.StatusPending}, 1000)
	fmt.Println("pending:", n)

	_ = client.CancelJob(ctx, later) // a PENDING job
	_ = client.RetryJob(ctx, zero)   // out of the DLQ: PENDING again, attempts 0
	ev := <-events
	fmt.Println("retried:", ev.Kind, ev.Error)
	j, _ := client.GetJob(ctx, later)
	fmt.Println("later:", j.Status)
	// Output:
	// dead letter: true do not retry: nothing to bill
	// pending: 1
	// retried: failed do not retry: nothing to bill
	// later: CANCELLED
}

// A workflow: a chain of steps, each run once the one before it has
// succeeded, written in one atomic step.
func ExampleNewWorkflow() {
	ctx := context.Background()
	step := func(name string) *ratchet.Task[string, string] {
		return ratchet.NewTask(name, func(ctx context.Context, order string) (string, error) {
			return name + " " + order, nil
		})
	}
	reserve, charge, ship := step("reserve"), step("charge"), step("ship")
	eng, events := node(memory.New(), engine.Options{}, reserve, charge, ship)
	defer eng.Stop(ctx)
	client := eng.Client()

	wf := ratchet.NewWorkflow()
	shipped := wf.Add(reserve.With("A-17")).Then(charge.With("A-17")).Then(ship.With("A-17"))
	id, err := client.SubmitWorkflow(ctx, wf)
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		<-events // the three completions
	}
	st, _ := client.Workflow(ctx, id)
	for i, j := range st.Jobs { // in submission order: parents first
		// Each step started once its parent had finished.
		fmt.Println(j.TaskName, j.Status, i == 0 || !j.ClaimedAt.Before(st.Jobs[i-1].FinishedAt))
	}
	res, _ := ship.Result(client, st.Job(shipped))
	fmt.Println(st.Done, st.Counts, res)
	// Output:
	// reserve SUCCEEDED true
	// charge SUCCEEDED true
	// ship SUCCEEDED true
	// true map[SUCCEEDED:3] ship A-17
}

// Named steps: the dashboard's graph labels each node with its step's
// name, kept as the job's property StepNameProperty.
func ExampleStep_Named() {
	ctx := context.Background()
	get := ratchet.NewTask("http.get", func(ctx context.Context, url string) (int, error) { return 200, nil })
	store := memory.New()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	wf := ratchet.NewWorkflow()
	invoices := wf.Add(get.With("https://erp.example.com/invoices")).Named("fetch invoices")
	wf.Add(get.With("https://erp.example.com/credits")).Named("fetch credit notes").After(invoices)
	if _, err := client.SubmitWorkflow(ctx, wf); err != nil {
		log.Fatal(err)
	}
	for _, s := range wf.Steps() {
		props, _ := store.GetPropertiesByPrefix(ctx, s.ID(), ratchet.StepNameProperty)
		fmt.Println(props[ratchet.StepNameProperty])
	}
	// Output:
	// fetch invoices
	// fetch credit notes
}

// A batch: children submitted as one unit, and a callback once they have
// all finished.
func ExampleClient_SubmitBatch() {
	ctx := context.Background()
	done := make(chan string, 1)
	var client *ratchet.Client
	report := ratchet.NewVoidTask("report", func(ctx context.Context, name string) error {
		jc, _ := ratchet.JobFromContext(ctx)
		st, err := client.Batch(ctx, jc.BatchID()) // the batch this callback ends
		if err != nil {
			return err
		}
		done <- fmt.Sprintf("%s: %s, %d succeeded", name, st.Outcome, st.Counts[ratchet.StatusSucceeded])
		return nil
	})
	eng, _ := node(memory.New(), engine.Options{BatchFinishInterval: 10 * time.Millisecond}, bill, report)
	defer eng.Stop(ctx)
	client = eng.Client()

	calls := make([]ratchet.Call, 10)
	for i := range calls {
		calls[i] = bill.With(Invoice{Customer: fmt.Sprint("customer-", i), Cents: 100})
	}
	ok := report.With("invoices")
	if _, err := client.SubmitBatch(ctx, ratchet.BatchSpec{Name: "invoices", OnSuccess: &ok}, calls); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	// Output:
	// invoices: SUCCEEDED, 10 succeeded
}

// A recurring schedule: registered once under a stable id, it fires a job
// per slot of its expression; the client reads when it fires next.
func ExampleTask_Recurring() {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 7, 8, 30, 0, 0, time.UTC)) // a Monday
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	nightly := bill.Recurring("nightly-acme", "0 2 * * *", Invoice{Customer: "acme", Cents: 990}, ratchet.InZone("Europe/Paris"))
	if _, err := client.PutSchedule(ctx, nightly); err != nil { // or engine.Options.Schedules
		log.Fatal(err)
	}
	info, _ := client.GetSchedule(ctx, "nightly-acme")
	fmt.Println(info.Task, info.Definition.Expr, info.NextFireAt)
	// Output:
	// invoice.bill 0 2 * * * 2026-12-08 01:00:00 +0000 UTC
}

// A signal: a job that waits, before it runs, for something outside (an
// approval); Signal delivers it and the job runs.
func ExampleClient_Signal() {
	ctx := context.Background()
	approve := ratchet.NewVoidTask("refund.approve", func(ctx context.Context, order string) error {
		jc, _ := ratchet.JobFromContext(ctx)
		s, err := jc.Signal(ctx)
		if err != nil {
			return err
		}
		var by string
		_ = s.Decode(ctx, &by)
		fmt.Println(order, s.Outcome, "by", by)
		return nil
	})
	eng, events := node(memory.New(), engine.Options{}, approve)
	defer eng.Stop(ctx)
	client := eng.Client()

	id, err := approve.Submit(ctx, client, "A-17", ratchet.AwaitSignal("approval", 24*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	j, _ := client.GetJob(ctx, id)
	fmt.Println(j.Status)
	if err := client.Signal(ctx, id, "approval", "ann"); err != nil {
		log.Fatal(err)
	}
	<-events
	// Output:
	// WAITING
	// A-17 DELIVERED by ann
}

// A transactional submission: the job is written inside your own
// transaction, and exists only if it commits.
func ExampleInTx() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ratchet-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "app.db"), sqlite.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}

	for _, commit := range []bool{true, false} {
		tx, err := store.DB().BeginTx(ctx, nil) // your transaction, with your own writes
		if err != nil {
			log.Fatal(err)
		}
		var after ratchet.AfterCommit
		id, err := bill.Submit(ctx, client, Invoice{Customer: "acme", Cents: 100}, ratchet.InTx(tx), ratchet.WithAfterCommit(&after))
		if err != nil {
			log.Fatal(err)
		}
		if commit {
			_ = tx.Commit()
			after.Committed() // wake the nodes now rather than at their next poll
		} else {
			_ = tx.Rollback()
		}
		_, err = client.GetJob(ctx, id)
		fmt.Println("committed:", commit, "job found:", err == nil)
	}
	// Output:
	// committed: true job found: true
	// committed: false job found: false
}

// exampleT stands in for the *testing.T that a test passes to NewEnv.
type exampleT struct{ cleanups []func() }

func (*exampleT) Helper()                           {}
func (*exampleT) Errorf(format string, args ...any) { fmt.Printf("error: "+format+"\n", args...) }
func (*exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }

// Testing jobs: simtest runs a real engine on an in-memory store and a
// fake clock, so a job that retries with backoff finishes at once.
func ExampleTask_Submit_testing() {
	t := &exampleT{} // in a test: func TestBill(t *testing.T) { ... }
	env := simtest.NewEnv(t, simtest.EnvOptions{}, bill)
	env.MockTask(bill).Times(2).ReturnError(errors.New("payment service down"))

	id, _ := bill.Submit(context.Background(), env.Client(), Invoice{Customer: "acme", Cents: 100},
		ratchet.WithBackoff(ratchet.BackoffExponential, time.Minute))
	env.RunUntilIdle() // the two retries, a minute and two minutes later, in simulated time

	res, _ := bill.Result(env.Client(), env.Job(id))
	fmt.Println(env.Status(id), res, len(env.Executions()), "runs")
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	// Output:
	// SUCCEEDED billed acme 100 cents 3 runs
}

// upper is a payload codec that upper-cases bytes: a stand-in for
// encryption or compression.
type upper struct{}

func (upper) Encode(_ context.Context, _ ratchet.PayloadRef, b []byte) ([]byte, error) {
	return []byte(fmt.Sprintf("%X", b)), nil
}
func (upper) Decode(_ context.Context, _ ratchet.PayloadRef, b []byte) ([]byte, error) {
	var out []byte
	_, err := fmt.Sscanf(string(b), "%X", &out)
	return out, err
}

// A pipeline is the one path of every payload: the serializer, the size
// check, then the codecs, and back. Test a codec of your own through it.
func ExamplePipeline() {
	ctx := context.Background()
	p, err := ratchet.NewPipeline(nil, 0, upper{}) // JSON, the 100 KiB limit, one codec
	if err != nil {
		log.Fatal(err)
	}
	ref := ratchet.JobRef(ratchet.SurfaceTask, uuid.Must(uuid.NewV7()))
	stored, err := p.Encode(ctx, ref, "invoice.bill", Invoice{Customer: "acme", Cents: 5})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(stored))
	serialized, err := p.DecodeBytes(ctx, ref, stored) // the codecs undone: the serializer's bytes
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(serialized))
	var back Invoice
	if err := p.Decode(ctx, ref, stored, &back); err != nil {
		log.Fatal(err)
	}
	fmt.Println(back)

	line, _ := p.EncodeText(ctx, ratchet.JobRef(ratchet.SurfaceLog, ref.JobID), "a log line")
	plain, _ := p.DecodeText(ctx, ratchet.JobRef(ratchet.SurfaceLog, ref.JobID), line)
	fmt.Println(plain)
	// Output:
	// 7B22637573746F6D6572223A2261636D65222C2263656E7473223A357D
	// {"customer":"acme","cents":5}
	// {acme 5}
	// a log line
}
