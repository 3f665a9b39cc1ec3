package engine_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log"
	"time"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// batchTasks are the examples' tasks: resize, a batch child, and
// report, the callback that tells on done how its batch ended.
func batchTasks(client func() *ratchet.Client, done chan<- string) (resize *ratchet.Task[int, ratchet.Void], report *ratchet.Task[string, ratchet.Void]) {
	resize = ratchet.NewVoidTask("image.resize", func(ctx context.Context, n int) error { return nil })
	report = ratchet.NewVoidTask("batch.report", func(ctx context.Context, label string) error {
		jc, _ := ratchet.JobFromContext(ctx)
		st, err := client().Batch(ctx, jc.BatchID())
		if err != nil {
			return err
		}
		done <- fmt.Sprintf("%s: %s, %d of %d succeeded", label, st.Outcome, st.Counts[ratchet.StatusSucceeded], st.Persisted)
		return nil
	})
	return resize, report
}

// startBatchNode starts a node whose batch finisher passes every 10 ms
// (DefaultBatchFinishInterval is a second).
func startBatchNode(done chan string) (*engine.Engine, *ratchet.Task[int, ratchet.Void], *ratchet.Task[string, ratchet.Void]) {
	var eng *engine.Engine
	resize, report := batchTasks(func() *ratchet.Client { return eng.Client() }, done)
	eng = startSignalNode(engine.Options{BatchFinishInterval: 10 * time.Millisecond}, resize, report)
	return eng, resize, report
}

// A batch: many children submitted as one unit; the callback of its end
// is submitted once every child has finished.
func Example_batch() {
	ctx := context.Background()
	done := make(chan string, 1)
	eng, resize, report := startBatchNode(done)
	defer eng.Stop(ctx)
	client := eng.Client()

	calls := make([]ratchet.Call, 100)
	for i := range calls {
		calls[i] = resize.With(i)
	}
	ok, failed := report.With("thumbnails"), report.With("thumbnails (some failed)")
	_, err := client.SubmitBatch(ctx, ratchet.BatchSpec{Name: "thumbnails", OnSuccess: &ok, OnFailure: &failed}, calls)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	// Output:
	// thumbnails: SUCCEEDED, 100 of 100 succeeded
}

// images yields a resize call per image from first to n, as a cursor
// over a table too large to hold in memory would; with failAt > 0 the
// read of item failAt fails.
func images(resize *ratchet.Task[int, ratchet.Void], first, n, failAt int) iter.Seq2[ratchet.Call, error] {
	return func(yield func(ratchet.Call, error) bool) {
		for i := first; i < n; i++ {
			if i == failAt {
				yield(ratchet.Call{}, errors.New("cursor lost"))
				return
			}
			if !yield(resize.With(i), nil) {
				return
			}
		}
	}
}

// A streaming batch: children from an iterator, written in chunks of
// ChunkSize, each chunk with the batch's persisted count in one atomic
// step; the batch ends once the iterator ended and every child finished.
func Example_streamBatch() {
	ctx := context.Background()
	done := make(chan string, 1)
	eng, resize, report := startBatchNode(done)
	defer eng.Stop(ctx)
	client := eng.Client()

	ok := report.With("archive scan")
	_, n, err := client.StreamBatch(ctx, ratchet.BatchSpec{OnSuccess: &ok, ChunkSize: 1000}, images(resize, 0, 2500, -1))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("persisted", n)
	fmt.Println(<-done)
	// Output:
	// persisted 2500
	// archive scan: SUCCEEDED, 2500 of 2500 succeeded
}

// Resuming a streaming batch whose submitter stopped: ResumeBatch tells
// how many items are persisted, and the stream continues there with the
// same batch id, with no duplicate child.
func Example_resumeBatch() {
	ctx := context.Background()
	done := make(chan string, 1)
	eng, resize, report := startBatchNode(done)
	defer eng.Stop(ctx)
	client := eng.Client()

	ok := report.With("nightly")
	spec := ratchet.BatchSpec{OnSuccess: &ok, ChunkSize: 1000}
	// The source fails at item 1500: the stream stops with the error, the
	// batch open with the chunk of items 0-999 (a chunk whose write fails
	// is reported to spec.OnChunkFailure, and stops it the same way).
	id, _, err := client.StreamBatch(ctx, spec, images(resize, 0, 2500, 1500))
	fmt.Println("stopped:", err != nil)

	from, err := client.ResumeBatch(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resume at", from)
	spec.ID = id
	if _, _, err := client.StreamBatch(ctx, spec, images(resize, int(from), 2500, -1)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	// Output:
	// stopped: true
	// resume at 1000
	// nightly: SUCCEEDED, 2500 of 2500 succeeded
}
