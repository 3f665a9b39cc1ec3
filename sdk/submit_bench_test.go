package ratchet_test

import (
	"context"
	"testing"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// discardStore accepts every insert and keeps nothing: what remains of a
// submission's cost is the client's own.
type discardStore struct{ spi.Store }

func (discardStore) InsertJobs(_ context.Context, jobs []*spi.Job) ([]spi.InsertResult, error) {
	res := make([]spi.InsertResult, len(jobs))
	for i, j := range jobs {
		res[i].ID = j.ID
	}
	return res, nil
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
