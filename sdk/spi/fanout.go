package spi

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Fanout returns one MetricsCollector that hands every callback to each of
// ms in turn (nil ones left out): a Prometheus adapter and an
// OpenTelemetry one side by side, or an application's own counters beside
// an adapter. Each optional callback (SignalMetrics, EncryptionMetrics,
// FinalizationMetrics, AdmissionMetrics, WakeupMetrics, CallbackMetrics,
// EventMetrics, TimeoutMetrics) reaches those of ms that implement it; the result
// implements StoreMetrics only when one of ms does, so that the engine
// times its store only for a collector that listens. Of one collector Fanout returns
// that collector, of none NoOpMetrics.
func Fanout(ms ...MetricsCollector) MetricsCollector {
	f := &fanout{}
	var timed []StoreMetrics
	for _, m := range ms {
		if m == nil {
			continue
		}
		f.all = append(f.all, m)
		if x, ok := m.(SignalMetrics); ok {
			f.signals = append(f.signals, x)
		}
		if x, ok := m.(EncryptionMetrics); ok {
			f.crypto = append(f.crypto, x)
		}
		if x, ok := m.(FinalizationMetrics); ok {
			f.fin = append(f.fin, x)
		}
		if x, ok := m.(AdmissionMetrics); ok {
			f.adm = append(f.adm, x)
		}
		if x, ok := m.(WakeupMetrics); ok {
			f.wake = append(f.wake, x)
		}
		if x, ok := m.(CallbackMetrics); ok {
			f.cb = append(f.cb, x)
		}
		if x, ok := m.(EventMetrics); ok {
			f.ev = append(f.ev, x)
		}
		if x, ok := m.(TimeoutMetrics); ok {
			f.timeouts = append(f.timeouts, x)
		}
		if x, ok := m.(StartByMetrics); ok {
			f.startBy = append(f.startBy, x)
		}
		if x, ok := m.(SnoozeMetrics); ok {
			f.snoozes = append(f.snoozes, x)
		}
		if x, ok := m.(StoreMetrics); ok {
			timed = append(timed, x)
		}
	}
	switch {
	case len(f.all) == 0:
		return NoOpMetrics{}
	case len(f.all) == 1:
		return f.all[0] // nothing to fan out
	case len(timed) > 0:
		return &timedFanout{fanout: f, timed: timed}
	}
	return f
}

type fanout struct {
	all      []MetricsCollector
	signals  []SignalMetrics
	crypto   []EncryptionMetrics
	fin      []FinalizationMetrics
	adm      []AdmissionMetrics
	wake     []WakeupMetrics
	cb       []CallbackMetrics
	ev       []EventMetrics
	timeouts []TimeoutMetrics
	startBy  []StartByMetrics
	snoozes  []SnoozeMetrics
}

// timedFanout is a fanout with collectors that time store operations.
type timedFanout struct {
	*fanout
	timed []StoreMetrics
}

func (f *timedFanout) StoreOperation(ctx context.Context, op, store, outcome string, elapsed time.Duration) {
	for _, m := range f.timed {
		m.StoreOperation(ctx, op, store, outcome, elapsed)
	}
}

func (f *fanout) JobStarted(ctx context.Context, id uuid.UUID, task string, p Priority) {
	for _, m := range f.all {
		m.JobStarted(ctx, id, task, p)
	}
}

func (f *fanout) JobCompleted(ctx context.Context, id uuid.UUID, task string, elapsed time.Duration) {
	for _, m := range f.all {
		m.JobCompleted(ctx, id, task, elapsed)
	}
}

func (f *fanout) JobFailed(ctx context.Context, id uuid.UUID, task string, err error, attempt int) {
	for _, m := range f.all {
		m.JobFailed(ctx, id, task, err, attempt)
	}
}

func (f *fanout) JobsClaimed(ctx context.Context, node string, n int) {
	for _, m := range f.all {
		m.JobsClaimed(ctx, node, n)
	}
}

func (f *fanout) ClaimTransientFailure(ctx context.Context, node string, err error) {
	for _, m := range f.all {
		m.ClaimTransientFailure(ctx, node, err)
	}
}

func (f *fanout) WriteSuperseded(ctx context.Context, id uuid.UUID, task string) {
	for _, m := range f.all {
		m.WriteSuperseded(ctx, id, task)
	}
}

func (f *fanout) JobsRecovered(ctx context.Context, node string, n int) {
	for _, m := range f.all {
		m.JobsRecovered(ctx, node, n)
	}
}

func (f *fanout) CircuitBreakerState(ctx context.Context, node, service, state string) {
	for _, m := range f.all {
		m.CircuitBreakerState(ctx, node, service, state)
	}
}

func (f *fanout) PollerBreakerState(ctx context.Context, node, state string) {
	for _, m := range f.all {
		m.PollerBreakerState(ctx, node, state)
	}
}

func (f *fanout) SignalWaiting(ctx context.Context, id uuid.UUID, task, name string) {
	for _, m := range f.signals {
		m.SignalWaiting(ctx, id, task, name)
	}
}

func (f *fanout) SignalDelivered(ctx context.Context, id uuid.UUID, task, name string) {
	for _, m := range f.signals {
		m.SignalDelivered(ctx, id, task, name)
	}
}

func (f *fanout) SignalTimedOut(ctx context.Context, id uuid.UUID, task, name string) {
	for _, m := range f.signals {
		m.SignalTimedOut(ctx, id, task, name)
	}
}

func (f *fanout) SignalCancelled(ctx context.Context, id uuid.UUID, task, name string) {
	for _, m := range f.signals {
		m.SignalCancelled(ctx, id, task, name)
	}
}

func (f *fanout) EncryptionIntegrityViolation(ctx context.Context, id uuid.UUID, surface string) {
	for _, m := range f.crypto {
		m.EncryptionIntegrityViolation(ctx, id, surface)
	}
}

func (f *fanout) EncryptionEnvelopeVersionSkew(ctx context.Context, id uuid.UUID, found, supported int) {
	for _, m := range f.crypto {
		m.EncryptionEnvelopeVersionSkew(ctx, id, found, supported)
	}
}

func (f *fanout) SuccessFinalizationRetried(ctx context.Context, id uuid.UUID, task string) {
	for _, m := range f.fin {
		m.SuccessFinalizationRetried(ctx, id, task)
	}
}

func (f *fanout) SuccessFinalizationMinimal(ctx context.Context, id uuid.UUID, task string) {
	for _, m := range f.fin {
		m.SuccessFinalizationMinimal(ctx, id, task)
	}
}

func (f *fanout) SuccessFinalizationStuck(ctx context.Context, id uuid.UUID, task string) {
	for _, m := range f.fin {
		m.SuccessFinalizationStuck(ctx, id, task)
	}
}

func (f *fanout) GateRejected(ctx context.Context, node, gate string, n int) {
	for _, m := range f.adm {
		m.GateRejected(ctx, node, gate, n)
	}
}

func (f *fanout) LocalWakeup(ctx context.Context, node string) {
	for _, m := range f.wake {
		m.LocalWakeup(ctx, node)
	}
}

func (f *fanout) ClusterWakeupPublished(ctx context.Context, node string, p Priority) {
	for _, m := range f.wake {
		m.ClusterWakeupPublished(ctx, node, p)
	}
}

func (f *fanout) ClusterWakeupReceived(ctx context.Context, node, source string) {
	for _, m := range f.wake {
		m.ClusterWakeupReceived(ctx, node, source)
	}
}

func (f *fanout) CallbackFailed(ctx context.Context, id uuid.UUID, task string, err error, attempt int) {
	for _, m := range f.cb {
		m.CallbackFailed(ctx, id, task, err, attempt)
	}
}

func (f *fanout) RunOverran(ctx context.Context, id uuid.UUID, task string, by time.Duration) {
	for _, m := range f.timeouts {
		m.RunOverran(ctx, id, task, by)
	}
}

func (f *fanout) JobExpired(ctx context.Context, id uuid.UUID, task string) {
	for _, m := range f.startBy {
		m.JobExpired(ctx, id, task)
	}
}

func (f *fanout) JobSnoozed(ctx context.Context, id uuid.UUID, task string, d time.Duration) {
	for _, m := range f.snoozes {
		m.JobSnoozed(ctx, id, task, d)
	}
}

func (f *fanout) EventsDropped(ctx context.Context, node, kind string) {
	for _, m := range f.ev {
		m.EventsDropped(ctx, node, kind)
	}
}
