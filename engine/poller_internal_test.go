package engine

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// gatedClaims is a store whose claims wait at the store until the test
// lets each go, and then return the number of jobs the test says.
type gatedClaims struct {
	arrived chan int // the limit of each claim that reached the store
	release chan int // lets one claim go with that many jobs (at most its limit)
	mu      sync.Mutex
	atStore int // claims at the store now
	most    int // the most claims at the store at once
}

func (g *gatedClaims) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	g.mu.Lock()
	g.atStore++
	g.most = max(g.most, g.atStore)
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.atStore--; g.mu.Unlock() }()
	g.arrived <- p.Limit
	var n int
	select {
	case n = <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	jobs := make([]*spi.Job, min(n, p.Limit))
	for i := range jobs {
		jobs[i] = &spi.Job{ID: uuid.New(), TaskName: "t", ClaimSeq: 1}
	}
	return jobs, nil
}

// next waits for the next claim to reach the store and returns its limit.
func (g *gatedClaims) next(t *testing.T) int {
	t.Helper()
	select {
	case n := <-g.arrived:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no claim reached the store")
		return 0
	}
}

// none checks that no claim reaches the store for a while (50 ms: the
// absence of an event has nothing to wait on).
func (g *gatedClaims) none(t *testing.T, why string) {
	t.Helper()
	select {
	case n := <-g.arrived:
		t.Fatalf("a claim (of %d) started %s", n, why)
	case <-time.After(50 * time.Millisecond):
	}
}

// With two claimers and a backlog (the last claim got all it asked for),
// the next claim starts while another is at the store, on the slots the
// other did not reserve; no third starts while two are there; without a
// backlog (a claim that got less) claims go one at a time again; the jobs
// never exceed the slots; and run returns only once the claims in flight
// have dispatched what they got.
func TestPollerClaimsConcurrently(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := &gatedClaims{arrived: make(chan int, 4), release: make(chan int)}
	var mu sync.Mutex
	running := 0 // jobs dispatched and not finished, unless the test finishes them
	p := newPoller(pollerDeps{clock: clockwork.NewRealClock(), log: slog.New(slog.DiscardHandler),
		claims: nodecore.ClaimerDeps{Store: store, Clock: clockwork.NewRealClock(), Log: slog.New(slog.DiscardHandler),
			Params: spi.ClaimParams{Tasks: []string{"t"}}, Dispatch: func(*spi.Job) { mu.Lock(); running++; mu.Unlock() }},
		policy:   nodecore.PollPolicy{Slots: 10, Batch: 4},
		strategy: claimAgain{},
		free:     func() int { mu.Lock(); defer mu.Unlock(); return 10 - running },
		lastBeat: time.Now, beat: func(context.Context) bool { return true },
		claimers: 2})
	ended := make(chan struct{})
	go func() { p.run(ctx); close(ended) }()
	next, none := func() int { return store.next(t) }, func(why string) { store.none(t, why) }

	assert.Equal(t, 4, next(), "the first claim asks for a batch")
	none("beside the first, before any claim showed a backlog")
	store.release <- 4 // full: a backlog
	// The second claim asks for a batch of the 6 free slots and, with a
	// backlog, a third starts beside it on the 2 slots that neither the
	// running jobs nor the claim in flight hold (they reach the store in
	// either order).
	assert.ElementsMatch(t, []int{4, 2}, []int{next(), next()})
	none("while two were at the store")
	mu.Lock()
	running = 0 // the jobs finish
	mu.Unlock()
	store.release <- 1 // partial: no backlog any more
	none("beside another after a claim got less than it asked for")
	store.release <- 0 // the other comes back: none at the store
	next()             // a claim starts alone
	none("beside it, without a backlog")
	cancel()
	<-ended
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, running, 10, "never more jobs than slots")
	store.mu.Lock()
	defer store.mu.Unlock()
	assert.Equal(t, 2, store.most, "at most two claims at the store at once")
	assert.Zero(t, store.atStore, "run returned after its claims came back")
}

// Without ClaimConcurrency, a node claims two at a time only from a store
// whose claims run concurrently to good effect, and only when its slots
// hold two full batches.
func TestClaimConcurrencyDefault(t *testing.T) {
	concurrent := spi.Capabilities{ConcurrentClaims: concurrentClaims(true)}
	for _, c := range []struct {
		concurrency, batch, option int
		caps                       spi.Capabilities
		want                       int
	}{
		{100, 0, 0, concurrent, 1},
		{1000, 500, 0, concurrent, 2},
		{1000, 600, 0, concurrent, 1},
		{3000, 0, 0, concurrent, 2},
		{1000, 500, 0, spi.Capabilities{}, 1},
		{1000, 500, 0, spi.Capabilities{ConcurrentClaims: concurrentClaims(false)}, 1},
		{100, 0, 3, spi.Capabilities{}, 3},
	} {
		o, err := Options{Concurrency: c.concurrency, ClaimBatchSize: c.batch, ClaimConcurrency: c.option}.withDefaults()
		require.NoError(t, err)
		assert.Equal(t, c.want, claimers(o, c.caps), "%+v", c)
	}
	_, err := Options{ClaimConcurrency: -1}.withDefaults()
	assert.ErrorContains(t, err, "ClaimConcurrency")
}

type concurrentClaims bool

func (c concurrentClaims) ConcurrentClaims() bool { return bool(c) }

// waitLong is a strategy whose waits outlast the test: only wakeups start
// a claim after the first.
type waitLong struct{}

func (waitLong) Next(r spi.PollResult) time.Duration {
	if r.Claimed > 0 && r.Claimed >= r.Asked {
		return 0
	}
	return time.Hour
}

// A freed slot wakes the poller while it waits for slots (none free), not
// after a claim that got less than it asked for (no backlog: the slot
// brings no new job), unless per-task limits may have kept jobs out of
// that claim. New work (poke) wakes it either way.
func TestFreedSlotWakesOnlyForSlots(t *testing.T) {
	for _, limited := range []bool{false, true} {
		t.Run(map[bool]string{false: "unlimited", true: "task limits"}[limited], func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store := &gatedClaims{arrived: make(chan int, 4), release: make(chan int)}
			var mu sync.Mutex
			running := 0
			dispatched := make(chan struct{}, 8)
			d := pollerDeps{clock: clockwork.NewRealClock(), log: slog.New(slog.DiscardHandler),
				claims: nodecore.ClaimerDeps{Store: store, Clock: clockwork.NewRealClock(), Log: slog.New(slog.DiscardHandler),
					Params:   spi.ClaimParams{Tasks: []string{"t"}},
					Dispatch: func(*spi.Job) { mu.Lock(); running++; mu.Unlock(); dispatched <- struct{}{} }},
				policy:   nodecore.PollPolicy{Slots: 4, Batch: 4},
				strategy: waitLong{},
				free:     func() int { mu.Lock(); defer mu.Unlock(); return 4 - running },
				lastBeat: time.Now, beat: func(context.Context) bool { return true }}
			if limited {
				d.claims.Limited = func(tasks []string) ([]string, int) { return tasks, 4 }
				d.claims.Admit = func(jobs []*spi.Job) ([]*spi.Job, []*spi.Job) { return jobs, nil }
				d.claims.GiveBack = func(context.Context, []*spi.Job) {}
			}
			p := newPoller(d)
			ended := make(chan struct{})
			go func() { p.run(ctx); close(ended) }()
			defer func() { cancel(); <-ended }()
			next, none := func() int { return store.next(t) }, func(why string) { store.none(t, why) }
			// give lets the claim at the store go with n jobs and waits
			// until they run.
			give := func(n int) {
				store.release <- n
				for range n {
					<-dispatched
				}
			}
			finish := func() { mu.Lock(); running--; mu.Unlock(); p.signals.freed() }

			assert.Equal(t, 4, next())
			give(1) // less than asked: no backlog
			finish()
			if limited {
				assert.Equal(t, 4, next(), "under task limits a freed slot may let a limited task's jobs in")
				store.release <- 0
			} else {
				none("on a freed slot after a claim that got less than it asked for")
			}
			p.poke() // new work
			assert.Equal(t, 4, next(), "new work wakes the poller")
			give(4) // every slot busy: the poller waits for one
			finish()
			assert.Equal(t, 1, next(), "a freed slot wakes a poller that waits for slots")
			store.release <- 0
		})
	}
}
