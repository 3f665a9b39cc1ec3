package prometheus_test

import (
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratchet-go/ratchet/engine"
	ratchetprom "github.com/ratchet-go/ratchet/metrics/prometheus"
)

// Record an engine's metrics in Prometheus and serve them at /metrics.
func Example() {
	reg := prometheus.NewRegistry()
	metrics, err := ratchetprom.New(reg)
	if err != nil {
		log.Fatal(err)
	}
	opts := engine.Options{Metrics: metrics}
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	_ = opts // engine.New(store, opts, tasks...), then http.ListenAndServe(addr, nil)
}
