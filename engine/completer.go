package engine

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

type pendingCompletion struct {
	c   spi.Completion
	job *spi.Job
}

// jobCompleter is what the completer needs of the store.
type jobCompleter interface {
	CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error)
}

// completerDeps are the completer's dependencies: the store it writes to,
// its batching, and callbacks into the engine instead of a back-pointer.
type completerDeps struct {
	store jobCompleter
	clock clockwork.Clock
	log   *slog.Logger
	// batch is the most completions one write takes; workers how many
	// writes run at once.
	batch, workers int
	// written is told of each completion once the store answered, and
	// whether it applied (false: superseded).
	written func(ctx context.Context, p pendingCompletion, applied bool)
	// released reports a claim that Stop gave back to PENDING: a final
	// write that fails loses nothing for it.
	released func(spi.ClaimRef) bool
}

// completer writes finished jobs back in batches: it takes everything queued
// since its last flush (up to its batch size) and writes it in one
// CompleteJobs call, so batches grow with load and need no timer.
type completer struct {
	completerDeps
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

func newCompleter(d completerDeps) *completer {
	return &completer{completerDeps: d, signal: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
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
	var batch []pendingCompletion
	batch, c.queue = NextBatch(c.queue, c.batch)
	if len(c.queue) > 0 {
		// More is waiting: wake another worker to write it meanwhile.
		select {
		case c.signal <- struct{}{}:
		default:
		}
	}
	return batch
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
		applied, err := c.store.CompleteJobs(ctx, cs)
		if err == nil {
			for i, ok := range applied {
				c.written(ctx, batch[i], ok)
			}
			return
		}
		c.log.Error("completing jobs failed", "jobs", len(cs), "err", err, "final", final)
		if final {
			for _, x := range cs {
				if !c.released(x.ClaimRef) { // else PENDING already: nothing lost
					c.unwritten.Add(1)
				}
			}
			return
		}
		select {
		case <-c.clock.After(backoff):
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
