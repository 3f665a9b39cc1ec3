package ratchet_test

import (
	"context"
	"fmt"
	"testing"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// discardStore accepts every insert and keeps nothing but, when last is
// set, the jobs of the last insert: what remains of a submission's cost is
// the client's own.
type discardStore struct {
	spi.Store
	last *[]*spi.Job
}

func (s discardStore) InsertJobs(_ context.Context, jobs []*spi.Job, _ spi.InsertOptions) ([]spi.InsertResult, error) {
	if s.last != nil {
		*s.last = jobs
	}
	res := make([]spi.InsertResult, len(jobs))
	for i, j := range jobs {
		res[i].ID = j.ID
	}
	return res, nil
}

// TestSubmitManyJobsOfTheirOwn checks that a batch larger than a slab of
// jobs (jobSlab) hands the store one job of its own per argument: its own
// id and payload, none shared with another.
func TestSubmitManyJobsOfTheirOwn(t *testing.T) {
	var got []*spi.Job
	c, err := ratchet.NewClient(discardStore{last: &got}, ratchet.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type arg struct{ N int }
	task := ratchet.NewVoidTask("numbers", func(context.Context, arg) error { return nil })
	args := make([]arg, 200)
	for i := range args {
		args[i].N = i
	}
	ids, err := task.SubmitMany(context.Background(), c, args)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(args) || len(ids) != len(args) {
		t.Fatalf("%d jobs and %d ids for %d arguments", len(got), len(ids), len(args))
	}
	seen := map[*spi.Job]bool{}
	for i, j := range got {
		if seen[j] {
			t.Fatalf("job %d is the same job as an earlier one", i)
		}
		seen[j] = true
		if j.ID != ids[i] || string(j.Payload) != fmt.Sprintf(`{"N":%d}`, i) {
			t.Errorf("job %d: id %s (submitted %s), payload %s", i, j.ID, ids[i], j.Payload)
		}
	}
}

// BenchmarkSubmitMany measures the client's side of a batch submission of
// 10,000 jobs (ids, payloads, the jobs themselves): the part of an insert
// during which the database waits for the next batch.
func BenchmarkSubmitMany(b *testing.B) {
	c, err := ratchet.NewClient(discardStore{}, ratchet.ClientOptions{})
	if err != nil {
		b.Fatal(err)
	}
	task := ratchet.NewVoidTask("bench.noop", func(context.Context, struct{}) error { return nil })
	args := make([]struct{}, 10000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := task.SubmitMany(ctx, c, args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(args)), "ns/job")
}

// TestSubmitCallsAllOrNothing: SubmitCalls writes the calls of many tasks
// in one insert, in order, each with its options; a call that fails its
// checks fails them all before anything is written.
func TestSubmitCallsAllOrNothing(t *testing.T) {
	var got []*spi.Job
	inserts := 0
	c, err := ratchet.NewClient(countingStore{discardStore{last: &got}, &inserts}, ratchet.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := ratchet.NewVoidTask("a", func(context.Context, int) error { return nil })
	b := ratchet.NewVoidTask("b", func(context.Context, string) error { return nil }, ratchet.WithPriority(ratchet.PriorityLow))
	calls := []ratchet.Call{a.With(1), b.With("x"), a.With(2, ratchet.WithPriority(ratchet.PriorityHigh)), b.With("y", ratchet.WithTags("t"))}
	ids, err := c.SubmitCalls(ctx, calls, ratchet.WithMaxRetries(7))
	if err != nil {
		t.Fatal(err)
	}
	if inserts != 1 || len(got) != 4 || len(ids) != 4 {
		t.Fatalf("%d inserts of %d jobs, %d ids: want one insert of 4", inserts, len(got), len(ids))
	}
	want := []struct {
		task, payload string
		prio          ratchet.Priority
		tags          int
	}{{"a", "1", ratchet.PriorityNormal, 0}, {"b", `"x"`, ratchet.PriorityLow, 0}, {"a", "2", ratchet.PriorityHigh, 0}, {"b", `"y"`, ratchet.PriorityLow, 1}}
	for i, w := range want {
		j := got[i]
		if j.ID != ids[i] || j.TaskName != w.task || string(j.Payload) != w.payload || j.Priority != w.prio || len(j.Tags) != w.tags || j.MaxRetries != 7 {
			t.Errorf("job %d: %s %s %s priority %v tags %v retries %d; want %+v and 7 retries (the common option)", i, j.ID, j.TaskName, j.Payload, j.Priority, j.Tags, j.MaxRetries, w)
		}
	}

	inserts = 0
	for name, bad := range map[string][]ratchet.Call{
		"a call's bad option":         {a.With(1), b.With("x", ratchet.WithMaxRetries(-1))},
		"a call of an invalid task":   {a.With(1), ratchet.NewVoidTask("", func(context.Context, int) error { return nil }).With(3)},
		"InTx in a call":              {a.With(1, ratchet.InTx(struct{}{}))},
		"arguments that don't encode": {ratchet.NewVoidTask("c", func(context.Context, chan int) error { return nil }).With(make(chan int))},
	} {
		if _, err := c.SubmitCalls(ctx, bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if inserts != 0 {
		t.Errorf("%d inserts made by failing submissions", inserts)
	}
	if ids, err := c.SubmitCalls(ctx, nil); err != nil || len(ids) != 0 || inserts != 0 {
		t.Errorf("no calls: %v, %v, %d inserts", ids, err, inserts)
	}
}

// countingStore counts the inserts of the store it wraps.
type countingStore struct {
	discardStore
	n *int
}

func (s countingStore) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	*s.n++
	return s.discardStore.InsertJobs(ctx, jobs, o)
}
