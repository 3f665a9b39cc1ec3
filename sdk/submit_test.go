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
