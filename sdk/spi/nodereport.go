package spi

import (
	"context"
	"encoding/json"
	"time"
)

// NodeReportStore is implemented by stores that record, with a node's
// heartbeat, a report of the node (its version, concurrency, running jobs,
// start time and circuit breakers), so that an operator's tools (the
// dashboard's nodes and breakers pages) see every live node, not only
// the one they run beside. The engine writes it with each heartbeat where
// the store has it, and falls back to NodeTaskStore.HeartbeatTasks where
// it does not.
type NodeReportStore interface {
	// HeartbeatReport is NodeTaskStore.HeartbeatTasks that also records
	// report (in its EncodeNodeReport form, bounded by
	// MaxNodeReportBytes), replacing the report recorded before. A plain
	// Heartbeat or HeartbeatTasks keeps the recorded report as it is; the
	// report goes with the node's row (DeregisterNode, RecoverOrphans).
	// LiveNodes returns it in NodeInfo.Report.
	HeartbeatReport(ctx context.Context, nodeID string, tasks []string, report NodeReport, now time.Time) error
}

// The bounds of a node's report: at most MaxNodeReportBreakers breakers,
// and at most MaxNodeReportBytes in its stored (JSON) form; the breakers
// beyond either bound are left out and counted in
// NodeReport.BreakersLeftOut.
const (
	MaxNodeReportBytes    = 64 << 10
	MaxNodeReportBreakers = 100
)

// NodeReport is what a node reports of itself with its heartbeat
// (NodeReportStore).
type NodeReport struct {
	// Version is the version of the node's Ratchet SDK module,
	// "(devel)" for a build inside Ratchet's own repository.
	Version string `json:"version,omitempty"`
	// Concurrency is how many jobs the node runs at once at most.
	Concurrency int `json:"concurrency"`
	// Running is how many jobs the node was running at the heartbeat.
	Running int `json:"running"`
	// StartedAt is when the node started (its uptime is the time since).
	StartedAt time.Time `json:"started_at"`
	// Breakers are the node's circuit breakers at the heartbeat: its
	// poller breaker first when it has one, then its services', by name.
	Breakers []NodeBreaker `json:"breakers,omitempty"`
	// BreakersLeftOut is how many breakers the bounds of the report left
	// out (see MaxNodeReportBreakers).
	BreakersLeftOut int `json:"breakers_left_out,omitempty"`
}

// NodeBreaker is one circuit breaker of a node as its NodeReport carries
// it: the fields of a breaker's status (package breaker's Status) that an
// operator reads.
type NodeBreaker struct {
	// Service is the protected service's name; for the poller breaker,
	// the node's id.
	Service string `json:"service"`
	// Poller is true for the node's poller breaker (the store's claims).
	Poller bool `json:"poller,omitempty"`
	// State is CLOSED, OPEN or HALF_OPEN.
	State string `json:"state"`
	// OpenFor is how long the breaker stays OPEN; zero unless it is.
	OpenFor time.Duration `json:"open_for,omitempty"`
	// FailureRateThreshold, SlidingWindowSize, MinimumCalls,
	// WaitDuration and PermittedCallsInHalfOpen are the breaker's
	// configuration (see CircuitBreakerConfig).
	FailureRateThreshold     float64       `json:"threshold"`
	SlidingWindowSize        int           `json:"window"`
	MinimumCalls             int           `json:"minimum_calls"`
	WaitDuration             time.Duration `json:"wait"`
	PermittedCallsInHalfOpen int           `json:"half_open_calls"`
}

// maxVersionLen bounds NodeReport.Version in the stored form.
const maxVersionLen = 200

// EncodeNodeReport is the stored form of a node's report: JSON, within
// the bounds (MaxNodeReportBreakers, MaxNodeReportBytes), the breakers
// beyond them left out and counted, StartedAt in UTC.
func EncodeNodeReport(r NodeReport) string {
	if len(r.Version) > maxVersionLen {
		r.Version = r.Version[:maxVersionLen]
	}
	r.StartedAt = r.StartedAt.UTC()
	if n := len(r.Breakers); n > MaxNodeReportBreakers {
		r.BreakersLeftOut += n - MaxNodeReportBreakers
		r.Breakers = r.Breakers[:MaxNodeReportBreakers]
	}
	for {
		b, err := json.Marshal(r)
		if err == nil && (len(b) <= MaxNodeReportBytes || len(r.Breakers) == 0) {
			return string(b)
		}
		// Too long (breakers of long names): keep the first half.
		keep := len(r.Breakers) / 2
		r.BreakersLeftOut += len(r.Breakers) - keep
		r.Breakers = r.Breakers[:keep]
	}
}

// DecodeNodeReport reads the stored form of a node's report (see
// EncodeNodeReport); an error when it is not one.
func DecodeNodeReport(s string) (*NodeReport, error) {
	r := &NodeReport{}
	if err := json.Unmarshal([]byte(s), r); err != nil {
		return nil, err
	}
	r.StartedAt = r.StartedAt.UTC()
	return r, nil
}
