package spi

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// DefaultSummaryLimit is the page size of ListWorkflows and ListBatches
// when SummaryParams.Limit is zero or less; MaxSummaryLimit is the largest
// page they return.
const (
	DefaultSummaryLimit = 50
	MaxSummaryLimit     = 500
)

// SummaryParams selects a page of ListWorkflows or ListBatches: newest
// first, in descending id order (the ids the client makes are UUIDv7,
// whose order is the order of creation).
type SummaryParams struct {
	// Before is the cursor: only workflows (batches) with a smaller id are
	// listed. The zero UUID starts at the newest.
	Before uuid.UUID
	// Limit is the page size: zero or less means DefaultSummaryLimit, and
	// more than MaxSummaryLimit means MaxSummaryLimit.
	Limit int
}

// PageSize is the number of summaries a page of p holds at most.
func (p SummaryParams) PageSize() int {
	switch {
	case p.Limit <= 0:
		return DefaultSummaryLimit
	case p.Limit > MaxSummaryLimit:
		return MaxSummaryLimit
	}
	return p.Limit
}

// WorkflowSummary is a workflow as ListWorkflows lists it: what a list
// shows of it, read from its live jobs (not the archived ones).
type WorkflowSummary struct {
	ID uuid.UUID
	// RootTask is the task of its first job (the lowest id: the first
	// step submitted), CreatedAt when that job was created.
	RootTask  string
	CreatedAt time.Time
	// Counts counts its live jobs by status: the progress of the workflow
	// is the terminal ones over the sum.
	Counts map[Status]int
}

// BatchSummary is a batch as ListBatches lists it: the batch as GetBatch
// reads it and the counts of its live children by status, as CountBatch
// reads them.
type BatchSummary struct {
	Batch  *Batch
	Counts map[Status]int
}

// WorkflowLister is implemented by stores that list their workflows. A
// workflow is the live jobs that share a WorkflowID, the batches' children
// excepted (BatchLister lists those); a workflow whose jobs were all
// archived or deleted is not listed.
type WorkflowLister interface {
	// ListWorkflows returns a page of workflows, newest (highest id)
	// first, and the cursor of the next page (SummaryParams.Before; the
	// zero UUID when this page is the last).
	ListWorkflows(ctx context.Context, p SummaryParams) ([]WorkflowSummary, uuid.UUID, error)
}

// BatchLister is implemented by stores that list their batches.
type BatchLister interface {
	// ListBatches returns a page of batches, newest (highest id) first,
	// each with the counts of its live children, and the cursor of the
	// next page (the zero UUID when this page is the last).
	ListBatches(ctx context.Context, p SummaryParams) ([]BatchSummary, uuid.UUID, error)
}
