package ratchetotel_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
	ratchetotel "github.com/ratchet-go/ratchet/tracing/ratchetotel"
)

func attr(attrs []attribute.KeyValue, key string) string {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// A submission's span is a child of the caller's; its context is stored
// with the job; the execution's span is a new root linked to it; a failed
// run records its sanitized error.
func TestSpansAndLinks(t *testing.T) {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	o := ratchetotel.Options{TracerProvider: tp}
	ok := ratchet.NewVoidTask("email.send", func(context.Context, string) error { return nil })
	bad := ratchet.NewVoidTask("card.charge", func(context.Context, string) error {
		return ratchet.DoNotRetry(errors.New("declined, password=hunter2"))
	})
	eng, err := engine.New(memory.New(), engine.Options{
		Client:         ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler), InsertMiddleware: []ratchet.InsertMiddleware{ratchetotel.InsertMiddleware(o)}},
		WorkMiddleware: []ratchet.WorkMiddleware{ratchetotel.WorkMiddleware(o)},
	}, ok, bad)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(10)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)

	parentCtx, parent := tp.Tracer("test").Start(ctx, "http request")
	id, err := ok.Submit(parentCtx, eng.Client(), "ann@example.com")
	require.NoError(t, err)
	_, err = bad.Submit(parentCtx, eng.Client(), "4242")
	require.NoError(t, err)
	parent.End()
	<-events
	<-events
	require.NoError(t, eng.Stop(ctx))

	j, err := eng.Client().GetJob(ctx, id)
	require.NoError(t, err)
	assert.Len(t, j.TraceContext, 25, "the trace context is stored with the job, compact under the default propagator")
	assert.Empty(t, j.Params, "and not in its params")

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	require.Len(t, byName["ratchet submit"], 2)
	for _, s := range byName["ratchet submit"] {
		assert.Equal(t, trace.SpanKindProducer, s.SpanKind())
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID(), "the submission is a child of the caller's span")
		assert.Equal(t, "ratchet", attr(s.Attributes(), "messaging.system"))
	}
	require.Len(t, byName["ratchet run email.send"], 1)
	run := byName["ratchet run email.send"][0]
	assert.Equal(t, trace.SpanKindConsumer, run.SpanKind())
	assert.False(t, run.Parent().IsValid(), "the run is a new root: a job may run days later")
	require.Len(t, run.Links(), 1)
	link := run.Links()[0].SpanContext
	assert.Equal(t, parent.SpanContext().TraceID(), link.TraceID(), "linked to the submission's trace")
	submitted := map[trace.SpanID]bool{}
	for _, s := range byName["ratchet submit"] {
		submitted[s.SpanContext().SpanID()] = true
	}
	assert.True(t, submitted[link.SpanID()], "linked to the submission's span")
	assert.Equal(t, id.String(), attr(run.Attributes(), "messaging.message.id"))
	assert.Equal(t, "email.send", attr(run.Attributes(), "ratchet.task"))
	assert.Equal(t, "", attr(run.Attributes(), "ratchet.run"), "a first run carries no run number")
	assert.Equal(t, codes.Unset, run.Status().Code)

	require.Len(t, byName["ratchet run card.charge"], 1)
	failed := byName["ratchet run card.charge"][0]
	assert.Equal(t, codes.Error, failed.Status().Code)
	assert.Contains(t, failed.Status().Description, "password=***", "the error as the engine stores it: sanitized")
	assert.NotContains(t, failed.Status().Description, "hunter2")
}

// A submission whose span is not sampled stores no trace context with its
// jobs (a link to an unrecorded span leads nowhere), and their runs carry
// no link.
func TestUnsampledSubmissionsCarryNoContext(t *testing.T) {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	o := ratchetotel.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))}
	ok := ratchet.NewVoidTask("email.send", func(context.Context, string) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{
		Client:         ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler), InsertMiddleware: []ratchet.InsertMiddleware{ratchetotel.InsertMiddleware(o)}},
		WorkMiddleware: []ratchet.WorkMiddleware{ratchetotel.WorkMiddleware(o)},
	}, ok)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(10)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)
	id, err := ok.Submit(ctx, eng.Client(), "ann@example.com")
	require.NoError(t, err)
	assert.Equal(t, engine.EventSucceeded, (<-events).Kind)
	j, err := eng.Client().GetJob(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, j.TraceContext, "no trace context stored for an unsampled submission")
	assert.Empty(t, rec.Ended(), "nothing sampled, nothing recorded")
}

// Under a propagator of the application's, the job carries what it injects
// (here W3C's traceparent), and the run links to it.
func TestApplicationPropagator(t *testing.T) {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	o := ratchetotel.Options{TracerProvider: tp, Propagator: propagation.TraceContext{}}
	ok := ratchet.NewVoidTask("email.send", func(context.Context, string) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{
		Client:         ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler), InsertMiddleware: []ratchet.InsertMiddleware{ratchetotel.InsertMiddleware(o)}},
		WorkMiddleware: []ratchet.WorkMiddleware{ratchetotel.WorkMiddleware(o)},
	}, ok)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(10)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)
	parentCtx, parent := tp.Tracer("test").Start(ctx, "http request")
	id, err := ok.Submit(parentCtx, eng.Client(), "ann@example.com")
	require.NoError(t, err)
	parent.End()
	assert.Equal(t, engine.EventSucceeded, (<-events).Kind)
	j, err := eng.Client().GetJob(ctx, id)
	require.NoError(t, err)
	assert.Contains(t, string(j.TraceContext), `"traceparent":"00-`+parent.SpanContext().TraceID().String())
	assert.Empty(t, j.Params)
	var run sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "ratchet run email.send" {
			run = s
		}
	}
	require.NotNil(t, run)
	require.Len(t, run.Links(), 1)
	assert.Equal(t, parent.SpanContext().TraceID(), run.Links()[0].SpanContext.TraceID())
}

// A job submitted before the trace context had a field of its own carries
// it in its params (CompactParam, or ParamPrefix under an application's
// propagator): its run still links to the submission.
func TestParamsOfEarlierJobsStillLink(t *testing.T) {
	ctx := context.Background()
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sid := trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	for name, params := range map[string]map[string]string{
		"compact":     {ratchetotel.CompactParam: "AQIDBAUGBwgJCgsMDQ4PEAECAwQFBgcI"},
		"traceparent": {ratchetotel.ParamPrefix + "traceparent": "00-" + tid.String() + "-" + sid.String() + "-01"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			o := ratchetotel.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
			if name == "traceparent" {
				o.Propagator = propagation.TraceContext{}
			}
			ok := ratchet.NewVoidTask("email.send", func(context.Context, string) error { return nil })
			store := memory.New()
			eng, err := engine.New(store, engine.Options{
				Client:         ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)},
				WorkMiddleware: []ratchet.WorkMiddleware{ratchetotel.WorkMiddleware(o)},
			}, ok)
			require.NoError(t, err)
			now := time.Now().UTC()
			_, err = store.InsertJobs(ctx, []*spi.Job{{ID: eng.Client().NewJobID(), TaskName: "email.send", Payload: []byte(`"ann"`),
				Status: spi.StatusPending, ScheduledAt: now, CreatedAt: now, Params: params}}, spi.InsertOptions{})

			require.NoError(t, err)
			events, unsub := eng.Subscribe(10)
			defer unsub()
			require.NoError(t, eng.Start(ctx))
			defer eng.Stop(ctx)
			assert.Equal(t, engine.EventSucceeded, (<-events).Kind)
			require.NoError(t, eng.Stop(ctx))
			spans := rec.Ended()
			require.Len(t, spans, 1)
			require.Len(t, spans[0].Links(), 1)
			assert.Equal(t, tid, spans[0].Links()[0].SpanContext.TraceID())
			assert.Equal(t, sid, spans[0].Links()[0].SpanContext.SpanID())
		})
	}
}
