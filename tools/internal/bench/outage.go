package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Outage is a time the store did not answer during a burn-down: from the
// first read that failed (Down) to the first that succeeded again
// (Answered), and the first job worked after that (Resumed; zero when the
// run ended before).
type Outage struct {
	Down, Answered, Resumed time.Time
}

// ResumedAfter is how long after the store answered again the node worked
// its first job.
func (o Outage) ResumedAfter() time.Duration {
	if o.Resumed.IsZero() {
		return 0
	}
	return o.Resumed.Sub(o.Answered)
}

// outageWatch writes to the store every interval during a burn-down (it
// renews a lease of its own, where the store has leases; else it reads one
// job), to tell when the store stops and starts answering writes (SQLite
// held by another process's BEGIN EXCLUSIVE still answers reads); the
// burn-down tells it of every job worked (worked), so that it can say how
// long after the store's return the node resumed.
type outageWatch struct {
	store    spi.Store
	interval time.Duration
	progress io.Writer

	mu       sync.Mutex
	outages  []Outage
	down     bool
	pending  bool // the store answered again, and no job was worked since
	stopping context.CancelFunc
	done     chan struct{}
}

// watchOutages starts an outageWatch; stop ends it and returns the outages.
func watchOutages(ctx context.Context, store spi.Store, interval time.Duration, progress io.Writer) *outageWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &outageWatch{store: store, interval: interval, progress: progress, stopping: cancel, done: make(chan struct{})}
	go w.run(ctx)
	return w
}

func (w *outageWatch) run(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := w.probe(ctx)
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		w.mu.Lock()
		switch {
		case err != nil && !w.down:
			w.down = true
			w.outages = append(w.outages, Outage{Down: now})
			fmt.Fprintf(w.progress, "the store does not answer: %v\n", err)
		case err == nil && w.down:
			w.down, w.pending = false, true
			o := &w.outages[len(w.outages)-1]
			o.Answered = now
			fmt.Fprintf(w.progress, "the store answers again after %.1f s\n", o.Answered.Sub(o.Down).Seconds())
		}
		w.mu.Unlock()
	}
}

// probe writes to the store, or reads where it has no leases.
func (w *outageWatch) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if ls := spi.CapabilitiesOf(w.store).Leases; ls != nil {
		_, err := ls.TryAcquireLease(ctx, "ratchet-bench-outage-watch", "bench", time.Minute, time.Now())
		return err
	}
	_, _, err := w.store.ListJobs(ctx, spi.ListParams{Limit: 1})
	return err
}

// worked tells the watch that a job was worked at now.
func (w *outageWatch) worked(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.pending {
		return
	}
	w.pending = false
	o := &w.outages[len(w.outages)-1]
	o.Resumed = now
	fmt.Fprintf(w.progress, "resumed %.1f s after the store answered\n", o.ResumedAfter().Seconds())
}

// stop ends the watch and returns the outages it saw; it may be called
// again.
func (w *outageWatch) stop() []Outage {
	w.stopping()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.outages
}
