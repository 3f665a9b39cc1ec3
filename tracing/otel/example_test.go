package ratchetotel_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
	ratchetotel "github.com/ratchet-go/ratchet/tracing/otel"
)

// Tracing a node: the submission's span, and the run's, linked to it.
// In production the TracerProvider exports (OTLP); here a recorder
// keeps the spans.
func Example() {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	o := ratchetotel.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
	send := ratchet.NewVoidTask("email.send", func(context.Context, string) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{Logger: slog.New(slog.DiscardHandler),
		InsertMiddleware: []ratchet.InsertMiddleware{ratchetotel.InsertMiddleware(o)},
		WorkMiddleware:   []ratchet.WorkMiddleware{ratchetotel.WorkMiddleware(o)}}, send)
	if err != nil {
		log.Fatal(err)
	}
	events, unsub := eng.Subscribe(1)
	defer unsub()
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := send.Submit(ctx, eng.Client(), "ann"); err != nil {
		log.Fatal(err)
	}
	<-events
	if err := eng.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	spans := rec.Ended()
	submit, run := spans[0], spans[1]
	fmt.Println(submit.Name(), "->", run.Name())
	fmt.Println("linked:", run.Links()[0].SpanContext.SpanID() == submit.SpanContext().SpanID())
	// Output:
	// ratchet submit -> ratchet run email.send
	// linked: true
}
