package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

type pendingCompletion struct {
	c   spi.Completion
	job *spi.Job
}

// completer writes finished jobs back in batches: it takes everything queued
// since its last flush (up to CompletionBatchSize) and writes it in one
// CompleteJobs call, so batches grow with load and need no timer.
type completer struct {
	e         *Engine
	mu        sync.Mutex
	queue     []pendingCompletion
	signal    chan struct{}
	quit      chan struct{}
	done      chan struct{}
	started   bool
	unwritten atomic.Int64 // completions the final flush could not write
}

// finalFlushTimeout bounds the flush of what is queued when the engine
// stops. It is not Stop's context: that may have expired with the drain,
// and completions of jobs that did finish must still be written.
const finalFlushTimeout = 10 * time.Second

func newCompleter(e *Engine) *completer {
	return &completer{e: e, signal: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

func (c *completer) start() {
	c.started = true
	n := c.e.opts.CompletionConcurrency
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
	c.queue = append(c.queue, p)
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

func (c *completer) take() []pendingCompletion {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.queue), c.e.opts.CompletionBatchSize)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	if len(c.queue) == 0 {
		c.queue = nil
	} else {
		// More is waiting: wake another worker to write it meanwhile.
		select {
		case c.signal <- struct{}{}:
		default:
		}
	}
	return batch
}

// loop is one flush worker; CompletionConcurrency of them share the queue,
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
		batch := c.take()
		if len(batch) == 0 {
			return
		}
		c.flush(ctx, batch, final)
	}
}

func (c *completer) flush(ctx context.Context, batch []pendingCompletion, final bool) {
	cs := make([]spi.Completion, len(batch))
	for i, p := range batch {
		cs[i] = p.c
	}
	backoff := 10 * time.Millisecond
	for {
		applied, err := c.e.store.CompleteJobs(ctx, cs)
		if err == nil {
			publish := !c.e.subs.empty()
			for i, ok := range applied {
				if publish {
					c.e.subs.publish(eventOf(cs[i], batch[i].job.TaskName, ok))
				}
				if !ok {
					j := batch[i].job
					c.e.opts.Metrics.WriteSuperseded(j.ID, j.TaskName)
					c.e.log.Warn("completion superseded: the job was recovered or released meanwhile; nothing written",
						"job_id", j.ID, "task", j.TaskName, "claim_seq", j.ClaimSeq)
				}
			}
			return
		}
		c.e.log.Error("completing jobs failed", "jobs", len(cs), "err", err, "final", final)
		if final {
			for _, x := range cs {
				if !c.e.wasReleased(x.ClaimRef) { // else PENDING already: nothing lost
					c.unwritten.Add(1)
				}
			}
			return
		}
		select {
		case <-c.e.opts.Clock.After(backoff):
		case <-c.quit:
			final = true
		}
		backoff = min(backoff*2, 5*time.Second)
	}
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
