package ratchetprom_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/metrics/ratchetprom"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Record an engine's metrics and its store's job gauges in Prometheus, and
// serve them at /metrics.
func Example() {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	metrics, err := ratchetprom.New(reg)
	if err != nil {
		log.Fatal(err)
	}
	store := memory.New()
	if err := metrics.ObserveJobs(store, nil, 0); err != nil { // the gauges, read at each scrape
		log.Fatal(err)
	}
	send := ratchet.NewVoidTask("email.send", func(context.Context, string) error { return nil })
	eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Metrics: metrics, Logger: slog.New(slog.DiscardHandler)}}, send)
	if err != nil {
		log.Fatal(err)
	}
	// Submitted before the node starts: the job waits, PENDING.
	if _, err := send.Submit(ctx, eng.Client(), "ann@example.com"); err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux) // in production: http.ListenAndServe(addr, mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, "ratchet_jobs{") || strings.HasPrefix(line, "ratchet_job_stats_up ") {
			fmt.Println(line)
		}
	}
	// Output:
	// ratchet_job_stats_up 1
	// ratchet_jobs{priority="NORMAL",status="PENDING",task="email.send"} 1
}
