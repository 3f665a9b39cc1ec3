package ratchetotel_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
	ratchetotel "github.com/ratchet-go/ratchet/tracing/ratchetotel"
)

// Tracing a node: the submission's span, and the run's, linked to it.
// In production the TracerProvider exports (OTLP); here a recorder
// keeps the spans.
func Example() {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	o := ratchetotel.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
	send := ratchet.NewVoidTask("email.send", func(context.Context, string) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{
		Client:         ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler), InsertMiddleware: []ratchet.InsertMiddleware{ratchetotel.InsertMiddleware(o)}},
		WorkMiddleware: []ratchet.WorkMiddleware{ratchetotel.WorkMiddleware(o)},
	}, send)
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

// Metrics of a node: the engine reports to the collector, the store's
// gauges are read at each collection. In production the MeterProvider
// exports (OTLP, or Prometheus through its exporter); here a manual
// reader collects.
func ExampleNewMetrics() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	m, err := ratchetotel.NewMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		log.Fatal(err)
	}
	store := memory.New()
	if r, ok := any(store).(spi.StatsReader); ok {
		if _, err := m.ObserveJobs(r, time.Now, 0); err != nil {
			log.Fatal(err)
		}
	}
	send := ratchet.NewVoidTask("email.send", func(context.Context, string) error { return nil })
	eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Metrics: m, Logger: slog.New(slog.DiscardHandler)}}, send)
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
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				if mt.Name == "ratchet.jobs.started" {
					fmt.Println(mt.Name, d.DataPoints[0].Value)
				}
			case metricdata.Histogram[float64]:
				if mt.Name == "messaging.process.duration" {
					fmt.Println(mt.Name, "count", d.DataPoints[0].Count, mt.Unit)
				}
			}
		}
	}
	// Output:
	// ratchet.jobs.started 1
	// messaging.process.duration count 1 s
}
