package engine

import (
	"context"
	"testing"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// BenchmarkRunTask is the cost of running a no-op job's task: plain, a
// protected task with breaking disabled (the same path: no allocation
// more), and through the built-in breaker.
func BenchmarkRunTask(b *testing.B) {
	plain := ratchet.NewVoidTask("t", func(context.Context, int) error { return nil })
	guarded := func() ratchet.Definition {
		return ratchet.NewVoidTask("t", func(context.Context, int) error { return nil }).ProtectedBy("svc", spi.ErrorFilter{})
	}
	for _, c := range []struct {
		name string
		task ratchet.Definition
		o    Options
	}{
		{"plain", plain, Options{}},
		{"protected-disabled", guarded(), Options{Breakers: BreakerOptions{Disabled: true}}},
		{"protected", guarded(), Options{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			e, err := New(memory.New(), c.o, c.task)
			if err != nil {
				b.Fatal(err)
			}
			j := &spi.Job{TaskName: "t", Payload: []byte("1")}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.runTask(ctx, j); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDisabledBreakerAllocatesNothing checks the benchmark's claim: a
// protected task with breaking disabled allocates what a plain one does.
func TestDisabledBreakerAllocatesNothing(t *testing.T) {
	run := func(task ratchet.Definition, o Options) float64 {
		e, err := New(memory.New(), o, task)
		if err != nil {
			t.Fatal(err)
		}
		j := &spi.Job{TaskName: "t", Payload: []byte("1")}
		return testing.AllocsPerRun(200, func() { _, _ = e.runTask(context.Background(), j) })
	}
	plain := run(ratchet.NewVoidTask("t", func(context.Context, int) error { return nil }), Options{})
	off := run(ratchet.NewVoidTask("t", func(context.Context, int) error { return nil }).ProtectedBy("svc", spi.ErrorFilter{}),
		Options{Breakers: BreakerOptions{Disabled: true}})
	if off != plain {
		t.Fatalf("a protected task with breaking disabled allocates %v per run, a plain one %v", off, plain)
	}
}
