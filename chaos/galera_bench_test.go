//go:build unix

package chaos_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/internal/dbtest/privatedb"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/mysql"
)

// burndownJobs is the size of one iteration of BenchmarkGaleraBurndown.
const burndownJobs = 5000

// BenchmarkGaleraBurndown measures three engines (of 100 workers each)
// working off burndownJobs no-op jobs submitted beforehand, on one MariaDB
// server (the machine's) and on a private three-node Galera cluster with
// every engine writing through one node (single-writer) or each through
// its own (multi-writer). It reports the work phase's jobs/s and, on
// Galera, the transactions aborted by a conflict with another node's
// commit per 1,000 jobs (each job is claimed once when nothing fails).
// Run it by hand:
//
//	go test ./chaos -run '^$' -bench GaleraBurndown -benchtime 5x
func BenchmarkGaleraBurndown(b *testing.B) {
	b.Run("one-server", func(b *testing.B) {
		dsn, _ := dbtest.MySQL(b)
		burndown(b, nil, []string{dsn, dsn, dsn})
	})
	b.Run("galera-single-writer", func(b *testing.B) {
		g := privateGalera(b)
		all := g.DSN("")
		burndown(b, g, []string{all, all, all})
	})
	b.Run("galera-multi-writer", func(b *testing.B) {
		g := privateGalera(b)
		var dsns []string
		for i := range 3 {
			dsns = append(dsns, "mysql://root@"+g.NodeAddr(i)+"/")
		}
		burndown(b, g, dsns)
	})
}

// burndown runs b.N burn-downs with one engine on each of dsns, each
// iteration in a database of its own.
func burndown(b *testing.B, g *privatedb.Galera, dsns []string) {
	ctx := context.Background()
	type noop struct{}
	task := ratchet.NewTask("bench.noop", func(context.Context, noop) (struct{}, error) { return struct{}{}, nil })
	var work time.Duration
	var conflicts int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		database := fmt.Sprintf("bench_galera_%d_%d", time.Now().UnixNano(), i)
		_, err := mysql.MigrateDSN(ctx, dsns[0], database)
		require.NoError(b, err)
		var stores []*mysql.Store
		for _, dsn := range dsns {
			s, err := mysql.Open(ctx, dsn, mysql.Options{Database: database})
			require.NoError(b, err)
			stores = append(stores, s)
		}
		client, err := ratchet.NewClient(stores[0], ratchet.ClientOptions{})
		require.NoError(b, err)
		for left := burndownJobs; left > 0; left -= 1000 {
			_, err := task.SubmitMany(ctx, client, make([]noop, min(left, 1000)))
			require.NoError(b, err)
		}
		var before []int64
		if g != nil {
			before, err = g.Conflicts(ctx)
			require.NoError(b, err)
		}
		var done atomic.Int64
		all := make(chan struct{})
		var engines []*engine.Engine
		var unsubscribes []func()
		for _, s := range stores {
			eng, err := engine.New(s, engine.Options{
				Client:      ratchet.ClientOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
				Concurrency: 100, PollInterval: 50 * time.Millisecond, MinPollInterval: 2 * time.Millisecond,
			}, task)
			require.NoError(b, err)
			events, unsubscribe := eng.Subscribe(burndownJobs)
			unsubscribes = append(unsubscribes, unsubscribe)
			go func() {
				for ev := range events {
					if ev.Kind == engine.EventSucceeded && done.Add(1) == burndownJobs {
						close(all)
					}
				}
			}()
			engines = append(engines, eng)
		}
		began := time.Now()
		b.StartTimer()
		for _, eng := range engines {
			require.NoError(b, eng.Start(ctx))
		}
		select {
		case <-all:
		case <-time.After(5 * time.Minute):
			b.Fatalf("%d of %d jobs succeeded after 5 minutes", done.Load(), burndownJobs)
		}
		b.StopTimer()
		work += time.Since(began)
		if g != nil {
			after, err := g.Conflicts(ctx)
			require.NoError(b, err)
			conflicts += privatedb.ConflictsBetween(before, after)
		}
		for _, eng := range engines {
			require.NoError(b, eng.Stop(ctx))
		}
		for _, unsubscribe := range unsubscribes {
			unsubscribe()
		}
		_, err = stores[0].DB().ExecContext(ctx, "DROP DATABASE `"+database+"`")
		require.NoError(b, err)
		for _, s := range stores {
			require.NoError(b, s.Close())
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(burndownJobs*b.N)/work.Seconds(), "jobs/s")
	if g != nil {
		b.ReportMetric(float64(conflicts)*1000/float64(burndownJobs*b.N), "conflicts/1000jobs")
	}
}
