package nodecore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Pending is the owner write that ends an execution, waiting in the
// completer's queue.
type Pending struct {
	C   spi.Completion
	Job *spi.Job
	// Logs are the run's last log lines, written just before C.
	Logs spi.LogAppend
}

// jobCompleter is what the completer needs of the store.
type jobCompleter interface {
	CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error)
}

// jobLogAppender is what the completer needs of the store's job logs.
type jobLogAppender interface {
	AppendJobLogs(ctx context.Context, appends []spi.LogAppend) ([]bool, error)
}

// CompleterDeps are the completer's dependencies: the store it writes to,
// its batching, and callbacks into the engine instead of a back-pointer.
type CompleterDeps struct {
	Store jobCompleter
	// Logs writes the runs' log lines; nil where the store keeps none.
	Logs  jobLogAppender
	Clock clockwork.Clock
	Log   *slog.Logger
	// Batch is the most completions one write takes; Workers how many
	// writes run at once.
	Batch, Workers int
	// Written is told of each completion once the store answered, and
	// whether it applied (false: superseded).
	Written func(ctx context.Context, p Pending, applied bool)
	// Finalization is told of the successes whose write is retried or
	// could not be made.
	Finalization spi.FinalizationMetrics
	// Released reports a claim that Stop gave back to PENDING: a final
	// write that fails loses nothing for it.
	Released func(spi.ClaimRef) bool
}

// Completer writes finished jobs back in batches: it takes everything
// queued since its last flush (up to its batch size) and writes it in one
// CompleteJobs call, so batches grow with load and need no timer. The
// engine runs its workers (Start, Stop); the cluster simulator steps the
// same queue and writes (Add, Take, Attempt) on its event loop.
type Completer struct {
	CompleterDeps
	mu sync.Mutex
	// queue holds what waits to be written, in order, in chunks of at
	// most batch completions, each cut when it fills: the first chunk is
	// always the next write (NextBatch of the whole queue). A queue in one
	// slice, taken from the front and appended at the back, was copied
	// whole each time it outgrew its array: with more bodies finishing
	// than one flush takes, about four copies of every completion (a
	// tenth of a node's CPU in a PostgreSQL burn-down).
	queue    [][]Pending
	logQueue []spi.LogAppend // lines of running jobs, handed over before their runs end
	signal   chan struct{}
	quit     chan struct{}
	// again is closed (and replaced) when the store answers again after
	// failing: the writes waiting out their retry backoff go at once.
	again     chan struct{}
	done      chan struct{}
	started   bool
	unwritten atomic.Int64 // completions the final flush could not write
}

// finalFlushTimeout bounds the flush of what is queued when the engine
// stops. It is not Stop's context: that may have expired with the drain,
// and completions of jobs that did finish must still be written.
const finalFlushTimeout = 10 * time.Second

// NewCompleter returns a completer on d, its workers not started.
func NewCompleter(d CompleterDeps) *Completer {
	if d.Finalization == nil {
		d.Finalization = spi.NoOpMetrics{}
	}
	return &Completer{CompleterDeps: d, signal: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		again: make(chan struct{})}
}

// Start starts the flush workers.
func (c *Completer) Start() {
	c.started = true
	n := max(c.Workers, 1)
	var wg sync.WaitGroup
	wg.Add(n)
	for range n {
		go func() {
			defer wg.Done()
			c.loop()
		}()
	}
	go func() {
		wg.Wait()
		close(c.done)
	}()
}

// Add queues p, for the next write.
func (c *Completer) Add(p Pending) {
	c.mu.Lock()
	if n := len(c.queue); n == 0 || len(c.queue[n-1]) == cap(c.queue[n-1]) {
		c.queue = append(c.queue, make([]Pending, 0, max(c.Batch, 1)))
	}
	last := &c.queue[len(c.queue)-1]
	*last = append(*last, p)
	c.mu.Unlock()
	Signal(c.signal)
}

// AddLogs queues lines of a running job, written with the next batch.
func (c *Completer) AddLogs(a spi.LogAppend) {
	c.mu.Lock()
	c.logQueue = append(c.logQueue, a)
	c.mu.Unlock()
	Signal(c.signal)
}

// Take returns the next batch and the log lines to write before it: the
// queued lines of running jobs, then the batch's own runs'.
func (c *Completer) Take() ([]Pending, []spi.LogAppend) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var batch []Pending
	if len(c.queue) > 0 {
		// The first chunk holds at most a batch: NextBatch takes it whole.
		batch, _ = NextBatch(c.queue[0], c.Batch)
		if bug("batch-drops-last") && len(c.queue) > 1 && len(batch) > 1 { // planted: loses a completion
			batch = batch[:len(batch)-1]
		}
		c.queue[0] = nil
		c.queue = c.queue[1:]
		if len(c.queue) == 0 {
			c.queue = nil
		}
	}
	logs := c.logQueue
	c.logQueue = nil
	if len(c.queue) > 0 {
		// More is waiting: wake another worker to write it meanwhile.
		Signal(c.signal)
	}
	for _, p := range batch {
		if len(p.Logs.Lines) > 0 {
			logs = append(logs, p.Logs)
		}
	}
	return batch, logs
}

// Queued returns what waits in the queue, in order (not the batches being
// written).
func (c *Completer) Queued() []Pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Pending
	for _, chunk := range c.queue {
		out = append(out, chunk...)
	}
	return out
}

// loop is one flush worker; workers of them share the queue,
// so one batch is written while the next gathers or is written too.
func (c *Completer) loop() {
	for {
		select {
		case <-c.signal:
		case <-c.quit:
			ctx, cancel := context.WithTimeout(context.Background(), finalFlushTimeout)
			c.flushAll(ctx, true)
			cancel()
			return
		}
		c.flushAll(context.Background(), false)
	}
}

// flushAll writes batches until the queue is empty. When final, a failing
// store gets no retries beyond its first attempt per batch: the jobs stay
// RUNNING and orphan recovery will hand them out again.
func (c *Completer) flushAll(ctx context.Context, final bool) {
	for {
		batch, logs := c.Take()
		if len(batch) == 0 && len(logs) == 0 {
			return
		}
		c.flush(ctx, batch, logs, final)
	}
}

// flush writes the log lines, then the completions of one batch, trying
// again after a backoff (Backoff) until they are written, or, when final,
// once. A log write is tried again only while its batch's completions are:
// lines never hold up a completion, and those that a failing store refused
// are reported lost.
func (c *Completer) flush(ctx context.Context, batch []Pending, logs []spi.LogAppend, final bool) {
	var backoff time.Duration
	for {
		var done bool
		if logs, done = c.Attempt(ctx, batch, logs, final); done || final {
			c.lostLogs(logs)
			return
		}
		backoff = Backoff(backoff)
		c.mu.Lock()
		again := c.again
		c.mu.Unlock()
		select {
		case <-c.Clock.After(backoff):
		case <-again:
			backoff = firstBackoff / 2
		case <-c.quit:
			final = true
		}
	}
}

// firstBackoff is the wait before a failed write's first retry.
const firstBackoff = 10 * time.Millisecond

// Backoff is the wait before the retry of a write that failed after the
// wait prev (0 for its first failure): 10 ms, doubling, up to 5 s.
func Backoff(prev time.Duration) time.Duration {
	if prev <= 0 {
		return firstBackoff
	}
	return min(prev*2, 5*time.Second)
}

// Attempt writes logs (Take's: the batch's own lines among them), then the
// completions of batch, once, and returns the log appends the store did
// not take and whether the batch was written. On success each
// completion is reported Written. On failure the successes are reported
// retried, or, when final (the flush at stop), stuck: those jobs stay
// RUNNING, for orphan recovery, unless their claim was released. A batch
// without completions is done once its lines were tried.
func (c *Completer) Attempt(ctx context.Context, batch []Pending, logs []spi.LogAppend, final bool) (rest []spi.LogAppend, done bool) {
	cs := make([]spi.Completion, len(batch))
	for i, p := range batch {
		cs[i] = p.C
	}
	if c.Logs == nil {
		logs = nil
	}
	logs = c.writeLogs(ctx, logs)
	if len(cs) == 0 {
		return logs, true
	}
	applied, err := c.Store.CompleteJobs(ctx, cs)
	if err != nil && !final && bug("retry-drops-batch") { // planted: a failed batch never retried
		return logs, true
	}
	if err == nil {
		for i, ok := range applied {
			c.Written(ctx, batch[i], ok)
		}
		return logs, true
	}
	c.Log.Error("completing jobs failed", "jobs", len(cs), "err", err, "final", final)
	for i, x := range cs {
		switch {
		case final && !c.Released(x.ClaimRef): // else PENDING already: nothing lost
			c.unwritten.Add(1)
			if x.Outcome == spi.OutcomeSucceeded {
				c.Finalization.SuccessFinalizationStuck(ctx, x.JobID, batch[i].Job.TaskName)
			}
		case !final && x.Outcome == spi.OutcomeSucceeded:
			c.Finalization.SuccessFinalizationRetried(ctx, x.JobID, batch[i].Job.TaskName)
		}
	}
	return logs, false
}

// Answered tells the completer that the store answers again (a claim
// succeeded after one failed): the writes waiting out their retry backoff
// are tried again at once, instead of after up to 5 s.
func (c *Completer) Answered() {
	c.mu.Lock()
	close(c.again)
	c.again = make(chan struct{})
	c.mu.Unlock()
}

// writeLogs writes the appends, returning them when the store failed.
func (c *Completer) writeLogs(ctx context.Context, logs []spi.LogAppend) []spi.LogAppend {
	if len(logs) == 0 {
		return nil
	}
	if _, err := c.Logs.AppendJobLogs(ctx, logs); err != nil {
		c.Log.Warn("writing job log lines failed", "jobs", len(logs), "err", err)
		return logs
	}
	return nil
}

// lostLogs reports lines that could not be written.
func (c *Completer) lostLogs(logs []spi.LogAppend) {
	if len(logs) == 0 {
		return
	}
	n := 0
	for _, a := range logs {
		n += len(a.Lines)
	}
	c.Log.Error("job log lines lost: the store did not take them", "lines", n, "jobs", len(logs))
}

// Stop flushes what is queued, with one attempt per batch bounded by
// finalFlushTimeout, and ends the flush workers. Its error counts the
// completions that were not written: only those jobs stay RUNNING until
// orphan recovery hands them out again.
func (c *Completer) Stop() error {
	if !c.started {
		return nil
	}
	close(c.quit)
	<-c.done
	if n := c.unwritten.Load(); n > 0 {
		return fmt.Errorf("%d completions not written when the engine stopped (the store failed): their jobs stay RUNNING until orphan recovery", n)
	}
	return nil
}

// Signal leaves a wakeup on c unless one is pending already.
func Signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
