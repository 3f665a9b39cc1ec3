package ratchet_test

import (
	"context"
	"fmt"
	"log"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// The lists of workflows and batches: newest first, with their
// progress, paged by the cursor.
func ExampleClient_ListWorkflows() {
	ctx := context.Background()
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, customer := range []string{"acme", "globex"} {
		wf := ratchet.NewWorkflow()
		wf.Add(bill.With(Invoice{Customer: customer, Cents: 100})).Then(bill.With(Invoice{Customer: customer, Cents: 5}))
		if _, err := client.SubmitWorkflow(ctx, wf); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := client.SubmitBatch(ctx, ratchet.BatchSpec{Name: "refunds"}, []ratchet.Call{bill.With(Invoice{Customer: "initech", Cents: 7})}); err != nil {
		log.Fatal(err)
	}
	page, err := client.ListWorkflows(ctx, ratchet.SummaryOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range page.Workflows {
		finished, total := ratchet.Progress(w.Counts)
		fmt.Printf("%s: %d/%d finished, %v\n", w.RootTask, finished, total, w.Counts)
	}
	batches, _ := client.ListBatches(ctx, ratchet.SummaryOptions{})
	for _, b := range batches.Batches {
		fmt.Println(b.Name, b.Persisted, b.Counts, b.Done())
	}
	// Output:
	// invoice.bill: 0/2 finished, map[BLOCKED:1 PENDING:1]
	// invoice.bill: 0/2 finished, map[BLOCKED:1 PENDING:1]
	// refunds 1 map[PENDING:1] false
}

func TestListWorkflowsAndBatches(t *testing.T) {
	ctx := t.Context()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	var ids []uuid.UUID // oldest first
	for i := range 3 {
		wf := ratchet.NewWorkflow()
		wf.Add(bill.With(Invoice{Customer: fmt.Sprint("c", i), Cents: 1}))
		id, err := client.SubmitWorkflow(ctx, wf)
		require.NoError(t, err)
		ids = append(ids, id)
		clock.Advance(time.Second)
	}
	page, err := client.ListWorkflows(ctx, ratchet.SummaryOptions{Limit: 2})
	require.NoError(t, err)
	require.Len(t, page.Workflows, 2)
	assert.Equal(t, []uuid.UUID{ids[2], ids[1]}, []uuid.UUID{page.Workflows[0].ID, page.Workflows[1].ID}, "newest first")
	assert.Equal(t, ids[1], page.Next)
	assert.Equal(t, "invoice.bill", page.Workflows[0].RootTask)
	assert.True(t, page.Workflows[0].CreatedAt.Equal(time.Date(2026, 12, 7, 8, 0, 2, 0, time.UTC)), "CreatedAt %s", page.Workflows[0].CreatedAt)
	assert.False(t, page.Workflows[0].Done())
	rest, err := client.ListWorkflows(ctx, ratchet.SummaryOptions{Before: page.Next, Limit: 2})
	require.NoError(t, err)
	require.Len(t, rest.Workflows, 1)
	assert.Equal(t, ids[0], rest.Workflows[0].ID)
	assert.Equal(t, uuid.Nil, rest.Next)

	_, err = client.ListWorkflows(ctx, ratchet.SummaryOptions{Limit: ratchet.MaxSummaryLimit + 1})
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = client.ListBatches(ctx, ratchet.SummaryOptions{Limit: -1})
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)

	plain, err := ratchet.NewClient(discardStore{}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = plain.ListWorkflows(ctx, ratchet.SummaryOptions{})
	assert.ErrorIs(t, err, ratchet.ErrUnsupported, "a store that cannot list its workflows")
	_, err = plain.ListBatches(ctx, ratchet.SummaryOptions{})
	assert.ErrorIs(t, err, ratchet.ErrUnsupported, "a store that cannot list its batches")

	assertProgress := func(counts map[ratchet.Status]int, finished, total int) {
		t.Helper()
		f, n := ratchet.Progress(counts)
		assert.Equal(t, [2]int{finished, total}, [2]int{f, n}, "Progress(%v)", counts)
	}
	assertProgress(nil, 0, 0)
	assertProgress(map[ratchet.Status]int{ratchet.StatusSucceeded: 3, ratchet.StatusFailed: 1, ratchet.StatusPending: 2}, 4, 6)
}
