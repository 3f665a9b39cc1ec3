package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

type pendingCompletion struct {
	c   spi.Completion
	job *spi.Job
	// logs are the run's last log lines, written just before c.
	logs spi.LogAppend
}

// jobCompleter is what the completer needs of the store.
type jobCompleter interface {
	CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error)
}

// jobLogAppender is what the completer needs of the store's job logs.
type jobLogAppender interface {
	AppendJobLogs(ctx context.Context, appends []spi.LogAppend) ([]bool, error)
}

// completerDeps are the completer's dependencies: the store it writes to,
// its batching, and callbacks into the engine instead of a back-pointer.
type completerDeps struct {
	store jobCompleter
	// logs writes the runs' log lines; nil where the store keeps none.
	logs  jobLogAppender
	clock clockwork.Clock
	log   *slog.Logger
	// batch is the most completions one write takes; workers how many
	// writes run at once.
	batch, workers int
	// written is told of each completion once the store answered, and
	// whether it applied (false: superseded).
	written func(ctx context.Context, p pendingCompletion, applied bool)
	// finalization is told of the successes whose write is retried or
	// could not be made.
	finalization spi.FinalizationMetrics
	// released reports a claim that Stop gave back to PENDING: a final
	// write that fails loses nothing for it.
	released func(spi.ClaimRef) bool
}

// completer writes finished jobs back in batches: it takes everything queued
// since its last flush (up to its batch size) and writes it in one
// CompleteJobs call, so batches grow with load and need no timer.
type completer struct {
	completerDeps
	mu sync.Mutex
	// queue holds what waits to be written, in order, in chunks of at
	// most batch completions, each cut when it fills: the first chunk is
	// always the next write (NextBatch of the whole queue). A queue in one
	// slice, taken from the front and appended at the back, was copied
	// whole each time it outgrew its array: with more bodies finishing
	// than one flush takes, about four copies of every completion (a
	// tenth of a node's CPU in a PostgreSQL burn-down).
	queue    [][]pendingCompletion
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

func newCompleter(d completerDeps) *completer {
	if d.finalization == nil {
		d.finalization = spi.NoOpMetrics{}
	}
	return &completer{completerDeps: d, signal: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		again: make(chan struct{})}
}

func (c *completer) start() {
	c.started = true
	n := c.workers
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

func (c *completer) add(p pendingCompletion) {
	c.mu.Lock()
	if n := len(c.queue); n == 0 || len(c.queue[n-1]) == cap(c.queue[n-1]) {
		c.queue = append(c.queue, make([]pendingCompletion, 0, max(c.batch, 1)))
	}
	last := &c.queue[len(c.queue)-1]
	*last = append(*last, p)
	c.mu.Unlock()
	signal(c.signal)
}

// addLogs queues lines of a running job, written with the next batch.
func (c *completer) addLogs(a spi.LogAppend) {
	c.mu.Lock()
	c.logQueue = append(c.logQueue, a)
	c.mu.Unlock()
	signal(c.signal)
}

// take returns the next batch and the queued lines of running jobs.
func (c *completer) take() ([]pendingCompletion, []spi.LogAppend) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var batch []pendingCompletion
	if len(c.queue) > 0 {
		// The first chunk holds at most a batch: NextBatch takes it whole.
		batch, _ = nodecore.NextBatch(c.queue[0], c.batch)
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
		signal(c.signal)
	}
	return batch, logs
}

// loop is one flush worker; workers of them share the queue,
// so one batch is written while the next gathers or is written too.
func (c *completer) loop() {
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
func (c *completer) flushAll(ctx context.Context, final bool) {
	for {
		batch, logs := c.take()
		if len(batch) == 0 && len(logs) == 0 {
			return
		}
		c.flush(ctx, batch, logs, final)
	}
}

// flush writes the log lines, then the completions of one batch. A log
// write is tried again only while its batch's completions are: lines never
// hold up a completion, and those that a failing store refused are
// reported lost.
func (c *completer) flush(ctx context.Context, batch []pendingCompletion, logs []spi.LogAppend, final bool) {
	cs := make([]spi.Completion, len(batch))
	for i, p := range batch {
		cs[i] = p.c
		if len(p.logs.Lines) > 0 {
			logs = append(logs, p.logs)
		}
	}
	if c.logs == nil {
		logs = nil
	}
	defer func() { c.lostLogs(logs) }()
	if len(cs) == 0 {
		logs = c.writeLogs(ctx, logs)
		return
	}
	backoff := 10 * time.Millisecond
	for {
		logs = c.writeLogs(ctx, logs)
		applied, err := c.store.CompleteJobs(ctx, cs)
		if err == nil {
			for i, ok := range applied {
				c.written(ctx, batch[i], ok)
			}
			return
		}
		c.log.Error("completing jobs failed", "jobs", len(cs), "err", err, "final", final)
		if final {
			for i, x := range cs {
				if !c.released(x.ClaimRef) { // else PENDING already: nothing lost
					c.unwritten.Add(1)
					if x.Outcome == spi.OutcomeSucceeded {
						c.finalization.SuccessFinalizationStuck(ctx, x.JobID, batch[i].job.TaskName)
					}
				}
			}
			return
		}
		for i, x := range cs {
			if x.Outcome == spi.OutcomeSucceeded {
				c.finalization.SuccessFinalizationRetried(ctx, x.JobID, batch[i].job.TaskName)
			}
		}
		c.mu.Lock()
		again := c.again
		c.mu.Unlock()
		select {
		case <-c.clock.After(backoff):
		case <-again:
			backoff = 5 * time.Millisecond
		case <-c.quit:
			final = true
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// answered tells the completer that the store answers again (a claim
// succeeded after one failed): the writes waiting out their retry backoff
// are tried again at once, instead of after up to 5 s.
func (c *completer) answered() {
	c.mu.Lock()
	close(c.again)
	c.again = make(chan struct{})
	c.mu.Unlock()
}

// writeLogs writes the appends, returning them when the store failed.
func (c *completer) writeLogs(ctx context.Context, logs []spi.LogAppend) []spi.LogAppend {
	if len(logs) == 0 {
		return nil
	}
	if _, err := c.logs.AppendJobLogs(ctx, logs); err != nil {
		c.log.Warn("writing job log lines failed", "jobs", len(logs), "err", err)
		return logs
	}
	return nil
}

// lostLogs reports lines that could not be written.
func (c *completer) lostLogs(logs []spi.LogAppend) {
	if len(logs) == 0 {
		return
	}
	n := 0
	for _, a := range logs {
		n += len(a.Lines)
	}
	c.log.Error("job log lines lost: the store did not take them", "lines", n, "jobs", len(logs))
}

// stop flushes what is queued, with one attempt per batch bounded by
// finalFlushTimeout, and ends the flush workers. Its error counts the
// completions that were not written: only those jobs stay RUNNING until
// orphan recovery hands them out again.
func (c *completer) stop() error {
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
