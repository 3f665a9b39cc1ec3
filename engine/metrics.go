package engine

import "github.com/ratchet-go/ratchet/sdk/spi"

// metricsOf is the engine's collector with its optional callbacks looked up
// once: those it does not implement fall back to NoOpMetrics, so the parts
// call them without a type assertion per event.
type metricsOf struct {
	spi.MetricsCollector
	fin  spi.FinalizationMetrics
	adm  spi.AdmissionMetrics
	wake spi.WakeupMetrics
	cb   spi.CallbackMetrics
}

func newMetricsOf(m spi.MetricsCollector) metricsOf {
	out := metricsOf{MetricsCollector: m, fin: spi.NoOpMetrics{}, adm: spi.NoOpMetrics{}, wake: spi.NoOpMetrics{}, cb: spi.NoOpMetrics{}}
	if x, ok := m.(spi.FinalizationMetrics); ok {
		out.fin = x
	}
	if x, ok := m.(spi.AdmissionMetrics); ok {
		out.adm = x
	}
	if x, ok := m.(spi.WakeupMetrics); ok {
		out.wake = x
	}
	if x, ok := m.(spi.CallbackMetrics); ok {
		out.cb = x
	}
	return out
}

// isCallback reports whether j is a callback job (OnSuccess, OnFailure, a
// batch's callback).
func isCallback(j *spi.Job) bool {
	if len(j.Params) == 0 {
		return false
	}
	_, cb := j.Params[spi.CallbackParam]
	return cb
}
