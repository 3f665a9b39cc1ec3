package spi

// Capabilities are a store's optional features beyond Store, each nil where
// the store lacks it. Find them with CapabilitiesOf, never by a type
// assertion on the store: a store that wraps another (to observe it, count
// its calls, inject faults) reports the inner store's capabilities by
// implementing CapabilityReporter, in one line.
type Capabilities struct {
	// Tx inserts jobs inside the application's own transaction.
	Tx TxInserter
	// Wakeups carries new-work wakeups between processes.
	Wakeups WakeupListener
	// Claims tells whether claims are still current.
	Claims ClaimChecker
	// Adopter finds the jobs of a claim whose answer was lost.
	Adopter ClaimAdopter
	// Leases grants named, time-limited leases.
	Leases LeaseStore
	// State keeps versioned per-job state.
	State JobStateStore
	// Properties keeps write-once per-job properties.
	Properties JobPropertyStore
	// Nodes records the tasks of each node and counts pending jobs per
	// task.
	Nodes NodeTaskStore
	// Reports records a report of each node with its heartbeat.
	Reports NodeReportStore
	// Samples keeps a per-minute history of the job counts by status.
	Samples StatsSampleStore
	// Counter counts the jobs of a listing, up to a cap.
	Counter JobCounter
	// Schedules keeps recurring schedules.
	Schedules ScheduleStore
	// Archive moves finished jobs to an archive.
	Archive JobArchiver
	// Logs keeps the job logs.
	Logs JobLogStore
	// Workflows keeps jobs that wait for other jobs.
	Workflows WorkflowStore
	// Signals keeps jobs that wait for a signal.
	Signals SignalStore
	// Batches keeps batches of jobs.
	Batches BatchStore
	// Rewriter rewrites sealed values in place (key rotation).
	Rewriter ValueRewriter
	// Stats reads the gauges of the jobs (counts, the oldest due job).
	Stats StatsReader
	// Deleter deletes finished jobs for good.
	Deleter JobDeleter
	// Audit keeps the audit log of operators' actions.
	Audit AuditLog
	// Bulk retries and cancels many jobs in one call.
	Bulk BulkManager
	// ConcurrentClaims says whether concurrent claims pay off.
	ConcurrentClaims ConcurrentClaimer
	// Pauser pauses and resumes tasks fleet-wide.
	Pauser TaskPauser
	// Attempts keeps a record of every run of a job.
	Attempts AttemptStore
	// StartBy finds and fails the jobs no node started by their start-by
	// deadline.
	StartBy StartBySweeper
	// Finish carries Client.WaitJob's notices between processes over the
	// store's own wakeup channel (FinishPublisher), where no coordinator
	// does: a store whose Wakeups hear them.
	Finish FinishPublisher
	// Unique honours Job.Unique on insert.
	Unique UniqueStore
	// Rates honours rate limits (RateResource) in claims.
	Rates RateLimitStore
	// Sequences honours Job.Sequence on insert.
	Sequences SequenceStore
	// FairShare passes the turns of fairness keys (Sequence.Fair) in
	// claims, when its FairTurns says so.
	FairShare FairShareStore
	// WorkflowList lists the workflows, newest first, with their progress.
	WorkflowList WorkflowLister
	// BatchList lists the batches, newest first, with their progress.
	BatchList BatchLister
}

// CapabilityReporter is implemented by stores that say which capabilities
// they have, instead of having them found by type assertion. A wrapping
// store forwards its inner store's:
//
//	func (w *wrapper) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(w.inner) }
type CapabilityReporter interface {
	Capabilities() Capabilities
}

// CapabilitiesOf returns the optional features of s: what s reports when it
// is a CapabilityReporter, else the optional interfaces of this package
// that s implements.
func CapabilitiesOf(s Store) Capabilities {
	if r, ok := s.(CapabilityReporter); ok {
		return r.Capabilities()
	}
	var c Capabilities
	c.Tx, _ = s.(TxInserter)
	c.Wakeups, _ = s.(WakeupListener)
	c.Claims, _ = s.(ClaimChecker)
	c.Adopter, _ = s.(ClaimAdopter)
	c.Leases, _ = s.(LeaseStore)
	c.State, _ = s.(JobStateStore)
	c.Properties, _ = s.(JobPropertyStore)
	c.Nodes, _ = s.(NodeTaskStore)
	c.Reports, _ = s.(NodeReportStore)
	c.Samples, _ = s.(StatsSampleStore)
	c.Counter, _ = s.(JobCounter)
	c.Schedules, _ = s.(ScheduleStore)
	c.Archive, _ = s.(JobArchiver)
	c.Logs, _ = s.(JobLogStore)
	c.Workflows, _ = s.(WorkflowStore)
	c.Signals, _ = s.(SignalStore)
	c.Batches, _ = s.(BatchStore)
	c.Rewriter, _ = s.(ValueRewriter)
	c.Stats, _ = s.(StatsReader)
	c.Deleter, _ = s.(JobDeleter)
	c.Audit, _ = s.(AuditLog)
	c.Bulk, _ = s.(BulkManager)
	c.ConcurrentClaims, _ = s.(ConcurrentClaimer)
	c.Pauser, _ = s.(TaskPauser)
	c.Attempts, _ = s.(AttemptStore)
	c.StartBy, _ = s.(StartBySweeper)
	c.Finish, _ = s.(FinishPublisher)
	c.Unique, _ = s.(UniqueStore)
	c.Rates, _ = s.(RateLimitStore)
	c.Sequences, _ = s.(SequenceStore)
	c.FairShare, _ = s.(FairShareStore)
	c.WorkflowList, _ = s.(WorkflowLister)
	c.BatchList, _ = s.(BatchLister)
	return c
}
