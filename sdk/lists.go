package ratchet

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The lists of workflows and batches, with their progress: what a
// dashboard shows before a single workflow's or batch's page.

// DefaultSummaryLimit is the page size of ListWorkflows and ListBatches
// when SummaryOptions.Limit is zero; MaxSummaryLimit is the largest.
const (
	DefaultSummaryLimit = spi.DefaultSummaryLimit
	MaxSummaryLimit     = spi.MaxSummaryLimit
)

// SummaryOptions select a page of ListWorkflows or ListBatches, newest
// first (by id: the ids the client makes follow its clock).
type SummaryOptions struct {
	// Before is the cursor: the Next of the previous page; zero starts
	// at the newest.
	Before uuid.UUID
	// Limit is the page size, 0..MaxSummaryLimit; zero means
	// DefaultSummaryLimit.
	Limit int
}

// WorkflowSummary is a workflow as ListWorkflows lists it, read from its
// live jobs (an archived job is not counted; a workflow whose jobs were
// all archived is not listed).
type WorkflowSummary struct {
	ID uuid.UUID
	// RootTask is the task of its first step, CreatedAt when it was
	// submitted.
	RootTask  string
	CreatedAt time.Time
	// Counts counts its live jobs by status.
	Counts map[Status]int
}

// Progress returns how many of the counted jobs have finished (any
// terminal status) and how many there are.
func Progress(counts map[Status]int) (finished, total int) {
	for st, n := range counts {
		total += n
		if st.Terminal() {
			finished += n
		}
	}
	return finished, total
}

// Done reports whether every live job of the workflow has finished.
func (w WorkflowSummary) Done() bool {
	f, t := Progress(w.Counts)
	return f == t
}

// WorkflowPage is a page of ListWorkflows; Next is the cursor of the
// following page (SummaryOptions.Before), the zero UUID after the last.
type WorkflowPage struct {
	Workflows []WorkflowSummary
	Next      uuid.UUID
}

// BatchPage is a page of ListBatches; Next is the cursor of the
// following page, the zero UUID after the last.
type BatchPage struct {
	Batches []*BatchStatus
	Next    uuid.UUID
}

// summaryParams checks o and converts it for the store.
func summaryParams(o SummaryOptions) (spi.SummaryParams, error) {
	if o.Limit < 0 || o.Limit > MaxSummaryLimit {
		return spi.SummaryParams{}, invalidArg("page limit %d out of range 0..%d", o.Limit, MaxSummaryLimit)
	}
	return spi.SummaryParams{Before: o.Before, Limit: o.Limit}, nil
}

// ListWorkflows returns a page of workflows, newest first, each with its
// first step's task and its jobs by status (its progress: see Progress);
// page on with WorkflowPage.Next as SummaryOptions.Before. A store that
// cannot list its workflows (spi.WorkflowLister) fails with
// ErrUnsupported.
func (c *Client) ListWorkflows(ctx context.Context, o SummaryOptions) (WorkflowPage, error) {
	wl := spi.CapabilitiesOf(c.store).WorkflowList
	if wl == nil {
		return WorkflowPage{}, fmt.Errorf("ratchet: list workflows: %w: store %T cannot list its workflows", ErrUnsupported, c.store)
	}
	p, err := summaryParams(o)
	if err != nil {
		return WorkflowPage{}, fmt.Errorf("ratchet: list workflows: %w", err)
	}
	got, next, err := wl.ListWorkflows(ctx, p)
	if err != nil {
		return WorkflowPage{}, fmt.Errorf("ratchet: list workflows: %w", err)
	}
	page := WorkflowPage{Workflows: make([]WorkflowSummary, len(got)), Next: next}
	for i, w := range got {
		page.Workflows[i] = WorkflowSummary{ID: w.ID, RootTask: w.RootTask, CreatedAt: w.CreatedAt, Counts: w.Counts}
	}
	return page, nil
}

// ListBatches returns a page of batches, newest first, each as Client.Batch
// reads it (its state and its children by status); page on with
// BatchPage.Next as SummaryOptions.Before. A store that cannot list its
// batches (spi.BatchLister) fails with ErrUnsupported.
func (c *Client) ListBatches(ctx context.Context, o SummaryOptions) (BatchPage, error) {
	bl := spi.CapabilitiesOf(c.store).BatchList
	if bl == nil {
		return BatchPage{}, fmt.Errorf("ratchet: list batches: %w: store %T cannot list its batches", ErrUnsupported, c.store)
	}
	p, err := summaryParams(o)
	if err != nil {
		return BatchPage{}, fmt.Errorf("ratchet: list batches: %w", err)
	}
	got, next, err := bl.ListBatches(ctx, p)
	if err != nil {
		return BatchPage{}, fmt.Errorf("ratchet: list batches: %w", err)
	}
	page := BatchPage{Batches: make([]*BatchStatus, len(got)), Next: next}
	for i, s := range got {
		page.Batches[i] = batchStatus(s.Batch, s.Counts)
	}
	return page, nil
}
