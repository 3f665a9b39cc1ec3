package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Middleware wraps every submission (insert middleware) and every run of a
// body (work middleware): tracing, metrics, authorization and job-log
// capture plug in here instead of into the engine.
func Example_middleware() {
	ctx := context.Background()
	// Stamp every job with the tenant of the request that submits it, and
	// refuse submissions without one: nothing is written then.
	type tenantKey struct{}
	stampTenant := func(ctx context.Context, jobs []*ratchet.Job, next ratchet.InsertFunc) ([]spi.InsertResult, error) {
		tenant, _ := ctx.Value(tenantKey{}).(string)
		if tenant == "" {
			return nil, fmt.Errorf("%w: no tenant in the request", ratchet.ErrInvalidArgument)
		}
		for _, j := range jobs {
			j.Params = map[string]string{"tenant": tenant}
		}
		return next(ctx, jobs)
	}
	// Time every body and log its outcome.
	timeBodies := func(ctx context.Context, j *ratchet.Job, next ratchet.WorkFunc) (any, error) {
		jc, _ := ratchet.JobFromContext(ctx)
		start := time.Now()
		res, err := next(ctx, j)
		jc.Logger.Info("body ran", "task", j.TaskName, "took", time.Since(start), "err", err)
		return res, err
	}
	done := make(chan string, 1)
	greet := ratchet.NewVoidTask("greet", func(ctx context.Context, name string) error {
		jc, _ := ratchet.JobFromContext(ctx)
		done <- "hello " + name + " of " + jc.Param("tenant")
		return nil
	})
	eng, err := engine.New(memory.New(), engine.Options{
		Client:         ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler), InsertMiddleware: []ratchet.InsertMiddleware{stampTenant}},
		WorkMiddleware: []ratchet.WorkMiddleware{timeBodies},
	}, greet)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)

	_, err = greet.Submit(ctx, eng.Client(), "ada")
	fmt.Println(err)
	_, err = greet.Submit(context.WithValue(ctx, tenantKey{}, "acme"), eng.Client(), "ada")
	fmt.Println(err, <-done)
	// Output:
	// ratchet: submit "greet": ratchet: invalid argument: no tenant in the request
	// <nil> hello ada of acme
}

// A raw submission names the task and gives its arguments as JSON: what the
// CLI, the dashboard and extensions use, with no Go type of the task. It
// takes the path of a typed submission: options, the size limit, the
// codecs, the insert middleware and the wakeup.
func Example_rawSubmission() {
	ctx := context.Background()
	type Invoice struct {
		Customer string `json:"customer"`
		Cents    int    `json:"cents"`
	}
	bill := ratchet.NewTask("invoice.bill", func(ctx context.Context, in Invoice) (string, error) {
		return fmt.Sprintf("billed %s %d cents", in.Customer, in.Cents), nil
	})
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)}}, bill)
	if err != nil {
		log.Fatal(err)
	}
	events, unsubscribe := eng.Subscribe(0)
	defer unsubscribe()
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)

	client := eng.Client()
	id, err := client.SubmitRaw(ctx, "invoice.bill", []byte(`{"customer":"acme","cents":1250}`),
		ratchet.WithPriority(ratchet.PriorityHigh))
	if err != nil {
		log.Fatal(err)
	}
	<-events
	job, _ := client.GetJob(ctx, id)
	res, _ := bill.Result(client, job)
	fmt.Println(job.Status, res)

	_, err = client.SubmitRaw(ctx, "invoice.bill", []byte(`{"customer":`))
	fmt.Println(err)
	_, err = client.SubmitRaw(ctx, "invoice.bill", []byte(`"`+strings.Repeat("x", 200_000)+`"`))
	fmt.Println(err)
	// Output:
	// SUCCEEDED billed acme 1250 cents
	// ratchet: invalid argument: raw submission of task "invoice.bill": the payload is not valid JSON
	// ratchet: task payload of "invoice.bill" is 200002 bytes, over the limit of 102400 bytes
}

// A job property is written with the job, read by its body, and listed by.
func Example_properties() {
	ctx := context.Background()
	done := make(chan string, 1)
	bill := ratchet.NewVoidTask("invoice.bill", func(ctx context.Context, order string) error {
		jc, _ := ratchet.JobFromContext(ctx)
		tenant, _, err := jc.Property(ctx, "tenant")
		done <- "billed " + order + " for " + tenant
		return err
	})
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)}}, bill)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)
	if _, err := bill.Submit(ctx, eng.Client(), "A-1001", ratchet.WithProperty("tenant", "acme")); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	n, _, err := eng.Client().CountJobs(ctx, ratchet.ListOptions{PropertyKey: "tenant", PropertyValue: "acme"}, 100)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("jobs of acme:", n)
	// Output:
	// billed A-1001 for acme
	// jobs of acme: 1
}

// A recurring schedule fires exactly once per slot, on every node that
// runs the scheduler; its row in the store survives restarts.
func Example_recurring() {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 8, 59, 0, 0, time.UTC))
	ran := make(chan string, 1)
	report := ratchet.NewVoidTask("report.daily", func(ctx context.Context, region string) error {
		jc, _ := ratchet.JobFromContext(ctx)
		slot, _ := jc.Slot() // the slot stays, even when the job's due time moves (a retry, a release)
		ran <- region + " report for the slot of " + slot.Format("2006-01-02 15:04")
		return nil
	})
	eng, err := engine.New(memory.New(), engine.Options{
		Client: ratchet.ClientOptions{Clock: clock, Logger: slog.New(slog.DiscardHandler)},
		Schedules: []ratchet.Recurring{
			// The spec's 6-field form (seconds first): 9 AM on weekdays.
			report.Recurring("daily-eu", "0 0 9 ? * MON-FRI", "eu", ratchet.InZone("UTC"),
				ratchet.OnMisfire(ratchet.MisfireFireOnce, 0)),
		},
	}, report)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)
	info, err := eng.Client().GetSchedule(ctx, "daily-eu")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("next:", info.NextFireAt.Format("Mon 15:04"))
	clock.Advance(time.Minute) // the slot is due: the scheduler fires it
	fmt.Println(<-ran)
	// Output:
	// next: Tue 09:00
	// eu report for the slot of 2030-01-01 09:00
}

// What a body logs through its JobContext's logger is kept with its job,
// per execution, and read back through the client.
func Example_jobLogs() {
	ctx := context.Background()
	store := memory.New()
	done := make(chan struct{})
	charge := ratchet.NewVoidTask("card.charge", func(ctx context.Context, cents int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		jc.Logger.Info("charging", "cents", cents)
		jc.Logger.Warn("gateway slow", "url", "https://pay.example/v1?api_key=s3cr3t", "ms", 900)
		close(done)
		return nil
	})
	eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)}}, charge)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	id, err := charge.Submit(ctx, eng.Client(), 1250)
	if err != nil {
		log.Fatal(err)
	}
	<-done
	if err := eng.Stop(ctx); err != nil { // the last lines are written with the completion
		log.Fatal(err)
	}
	lines, err := eng.Client().JobLogs(ctx, id, ratchet.LogCursor{}, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range lines {
		fmt.Println("run", l.Run, l.Level, l.Message)
	}
	// Output:
	// run 1 INFO charging cents=1250
	// run 1 WARN gateway slow url="https://pay.example/v1?api_key=***" ms=900
}

// A task protected by a service's circuit breaker: once the service
// failed often enough, its jobs wait (not charged an attempt) instead of
// running, until trial calls find it back.
func Example_circuitBreaker() {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var gatewayUp atomic.Bool
	charge := ratchet.NewVoidTask("card.charge", func(ctx context.Context, cents int) error {
		if !gatewayUp.Load() {
			return errors.New("503 from the gateway")
		}
		return nil
	}, ratchet.WithMaxRetries(10), ratchet.WithBackoff(ratchet.BackoffFixed, time.Hour)).
		ProtectedBy("payments", spi.ErrorFilter{})
	eng, err := engine.New(memory.New(), engine.Options{
		Client:   ratchet.ClientOptions{Clock: clock, Logger: slog.New(slog.DiscardHandler)},
		Breakers: engine.BreakerOptions{Config: spi.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute}},
	}, charge)
	if err != nil {
		log.Fatal(err)
	}
	events, unsubscribe := eng.Subscribe(10)
	defer unsubscribe()
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)
	for range 3 {
		id, err := charge.Submit(ctx, eng.Client(), 1250)
		if err != nil {
			log.Fatal(err)
		}
		ev := <-events
		j, _ := eng.Client().GetJob(ctx, id)
		fmt.Printf("%s, %d attempt(s) charged: %s\n", ev.Kind, j.Attempts, ev.Error)
	}
	// Output:
	// retrying, 1 attempt(s) charged: 503 from the gateway
	// retrying, 1 attempt(s) charged: 503 from the gateway
	// retrying, 0 attempt(s) charged: *spi.CircuitOpenError: circuit breaker of service "payments" is open: retry after 30s
}

// warmup is a lifecycle hook: it loads what the tasks need before the
// engine claims, and says when the node is up and down.
type warmup struct{ engine.NoOpHook }

func (warmup) BeforeStart(context.Context) error { fmt.Println("loading rates"); return nil }
func (warmup) AfterStart(context.Context)        { fmt.Println("node up") }
func (warmup) AfterStop(context.Context)         { fmt.Println("node down") }

// Lifecycle hooks run around the engine's start and stop.
func Example_lifecycleHooks() {
	ctx := context.Background()
	noop := ratchet.NewVoidTask("noop", func(context.Context, int) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)}, Hooks: []engine.LifecycleHook{warmup{}}}, noop)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	if err := eng.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// loading rates
	// node up
	// node down
}

// A node's liveness and readiness, for Kubernetes probes: mount the
// handlers in the application's own server.
func Example_health() {
	ctx := context.Background()
	noop := ratchet.NewVoidTask("noop", func(context.Context, int) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)}}, noop)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/livez", eng.LivenessHandler())
	mux.Handle("/readyz", eng.ReadinessHandler())
	status := func(path string) int {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	fmt.Println("before start:", status("/readyz"))
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("running:", status("/livez"), status("/readyz"))
	if err := eng.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("stopped:", status("/livez"))
	// Output:
	// before start: 503
	// running: 200 200
	// stopped: 503
}

// onlyAdmins lets the principal "admin" create jobs and runs them all.
type onlyAdmins struct{}

type userKey struct{}

func (onlyAdmins) CheckCreate(ctx context.Context, r ratchet.CreateRequest) error {
	if ctx.Value(userKey{}) != "admin" {
		return fmt.Errorf("only admins create %s jobs", r.Job.TaskName)
	}
	return nil
}

func (onlyAdmins) CheckExecute(context.Context, *ratchet.Job) error { return nil }

// An authorization policy: CheckCreate sees every job a call would create,
// with the caller's context, and a refusal writes nothing; CheckExecute
// runs at dispatch.
func Example_authorization() {
	ctx := context.Background()
	purge := ratchet.NewVoidTask("account.purge", func(context.Context, string) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Authorization: onlyAdmins{}, Logger: slog.New(slog.DiscardHandler)}}, purge)
	if err != nil {
		log.Fatal(err)
	}
	_, err = purge.Submit(context.WithValue(ctx, userKey{}, "guest"), eng.Client(), "acct-7")
	fmt.Println(errors.Is(err, ratchet.ErrUnauthorized), err)
	_, err = purge.Submit(context.WithValue(ctx, userKey{}, "admin"), eng.Client(), "acct-7")
	fmt.Println(err)
	// Output:
	// true ratchet: submit "account.purge": task "account.purge" refused: ratchet: unauthorized: only admins create account.purge jobs
	// <nil>
}

// Job details for people: the arguments and result decoded, with the
// sensitive fields masked when MaskPayloads is on; the body still
// receives the real values.
func Example_jobDetail() {
	ctx := context.Background()
	type login struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	done := make(chan struct{})
	check := ratchet.NewVoidTask("login.check", func(_ context.Context, l login) error {
		fmt.Println("body sees", l.Password)
		close(done)
		return nil
	})
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{MaskPayloads: true, Logger: slog.New(slog.DiscardHandler)}}, check)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)
	id, err := check.Submit(ctx, eng.Client(), login{User: "ann", Password: "hunter2"})
	if err != nil {
		log.Fatal(err)
	}
	<-done
	d, err := eng.Client().JobDetail(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(d.Arguments))
	// Output:
	// body sees hunter2
	// {"password":"***","user":"ann"}
}
